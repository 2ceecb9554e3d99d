"""A session's thread is a column of its own (``thread_id``), no longer a key of ``client_info``
that one protocol names; the unique index of live sessions per person, agent and thread
follows it."""

from django.conf import settings
from django.db import migrations, models


def copy_threads(apps, schema_editor):
    Session = apps.get_model("a2ui", "A2UISessionLog")
    rows = Session.objects.filter(client_info__has_key="agui_thread_id").only("pk", "client_info")
    for row in rows.iterator(chunk_size=500):
        thread = row.client_info.get("agui_thread_id")
        if isinstance(thread, str) and thread:
            Session.objects.filter(pk=row.pk).update(thread_id=thread[:200])


class Migration(migrations.Migration):

    dependencies = [
        ('a2ui', '0017_session_erased_at'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='a2uisessionlog',
            name='a2ui_session_agui_thread_live',
        ),
        migrations.AddField(
            model_name='a2uisessionlog',
            name='thread_id',
            field=models.CharField(blank=True, default="", help_text="The client's name for the conversation this session is (an AG-UI thread id), or empty: at most one live session per person, agent and thread.", max_length=200),
        ),
        migrations.RunPython(copy_threads, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='a2uisessionlog',
            constraint=models.UniqueConstraint(condition=models.Q(('state__in', ['connected', 'initialized', 'active']), models.Q(('thread_id', ''), _negated=True)), fields=('user', 'agent', 'thread_id'), name='a2ui_session_thread_live'),
        ),
    ]
