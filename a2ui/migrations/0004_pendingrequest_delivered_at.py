from django.db import migrations, models
from django.db.models import F


def mark_resolved_delivered(apps, schema_editor):
    """Outcomes resolved before this field existed went wherever they went: never re-deliver."""
    PendingRequest = apps.get_model("a2ui", "PendingRequest")
    PendingRequest.objects.exclude(status="pending").update(
        delivered_at=F("resolved_at")
    )


class Migration(migrations.Migration):
    dependencies = [("a2ui", "0003_a2ui_compliance_group")]

    operations = [
        migrations.AddField(
            model_name="pendingrequest",
            name="delivered_at",
            field=models.DateTimeField(
                blank=True, null=True,
                help_text="When an agent received the outcome (answer, timeout or cancel).",
            ),
        ),
        migrations.RunPython(mark_resolved_delivered, migrations.RunPython.noop),
    ]
