"""Data migration: the "a2ui compliance" group and the four action permissions.

Same content as ``manage.py a2ui_compliance_group`` (a2ui.compliance.access), written with
historical models so it stays valid as the code moves on.
"""

from django.db import migrations

GROUP = "a2ui compliance"
# (model, codename, name)
PERMISSIONS = [
    ("a2uisessionlog", "view_a2uisessionlog", "Can view A2UI session"),
    ("a2uiconsentrecord", "view_a2uiconsentrecord", "Can view A2UI consent record"),
    ("auditevent", "view_auditevent", "Can view audit event"),
    ("streamtoken", "view_streamtoken", "Can view stream token"),
    ("agent", "view_agent", "Can view agent"),
    ("a2uisessionlog", "terminate_a2uisessionlog", "Can terminate live A2UI sessions"),
    ("streamtoken", "revoke_streamtoken", "Can revoke stream tokens"),
    ("agent", "revoke_agent", "Can revoke agents"),
    ("a2uiconsentrecord", "revoke_a2uiconsentrecord", "Can revoke consents on a user's behalf"),
]


def create_group(apps, schema_editor):
    db = schema_editor.connection.alias
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    perms = []
    for model, codename, name in PERMISSIONS:
        ct, _ = ContentType.objects.using(db).get_or_create(app_label="a2ui", model=model)
        perm, _ = Permission.objects.using(db).get_or_create(
            content_type=ct, codename=codename, defaults={"name": name}
        )
        perms.append(perm)
    group, _ = Group.objects.using(db).get_or_create(name=GROUP)
    group.permissions.add(*perms)


def remove_group(apps, schema_editor):
    db = schema_editor.connection.alias
    apps.get_model("auth", "Group").objects.using(db).filter(name=GROUP).delete()
    apps.get_model("auth", "Permission").objects.using(db).filter(
        content_type__app_label="a2ui",
        codename__in=[c for _, c, _ in PERMISSIONS if not c.startswith("view_")],
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("a2ui", "0002_session_surface_seq"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
