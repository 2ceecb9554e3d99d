"""Who may do what in the compliance admin: the "a2ui compliance" group, the custom action
permissions (terminate, revoke, replay, verify, export) and the erase permission no group
holds."""

from django.db import transaction

from a2ui.models import A2UIConsentRecord, A2UISessionLog, Agent, AuditEvent, StreamToken

COMPLIANCE_GROUP = "a2ui compliance"

#: Custom permissions (app label a2ui): (codename, model, name). Superusers have them all.
ACTION_PERMISSIONS = [
    ("terminate_a2uisessionlog", A2UISessionLog, "Can terminate live A2UI sessions"),
    ("revoke_streamtoken", StreamToken, "Can revoke stream tokens"),
    ("revoke_agent", Agent, "Can revoke agents"),
    ("revoke_a2uiconsentrecord", A2UIConsentRecord, "Can revoke consents on a user's behalf"),
    ("view_replay", A2UISessionLog, "Can replay what the person saw in a session"),
    ("verify_auditevent", AuditEvent, "Can verify the audit trail and write checkpoints"),
    ("export_person", AuditEvent, "Can export everything held about one person"),
]

#: Held by no group: erasing a person's data needs this second permission, given on purpose.
ERASE_PERMISSION = ("erase_person", AuditEvent, "Can erase everything held about one person")

#: What the group holds: view sessions, consents and the audit trail (and the tokens and agents
#: its revoke actions act on), the four action permissions, replay, verifying the audit trail
#: and exporting a person's data. Not erasing it (``erase_person``). Nothing else.
COMPLIANCE_PERMISSIONS = [
    ("view_a2uisessionlog", A2UISessionLog),
    ("view_a2uiconsentrecord", A2UIConsentRecord),
    ("view_auditevent", AuditEvent),
    ("view_streamtoken", StreamToken),
    ("view_agent", Agent),
] + [(codename, model) for codename, model, _ in ACTION_PERMISSIONS]


def ensure_compliance_group():
    """Create (or reset) the "a2ui compliance" group with exactly its permissions.

    Idempotent. Creates the custom action permissions and, on a fresh database, the model view
    permissions if ``migrate`` has not created them yet. Returns (group, created).
    """
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    names = {codename: name for codename, _, name in ACTION_PERMISSIONS}
    perms = []
    with transaction.atomic():
        codename, model, name = ERASE_PERMISSION
        Permission.objects.get_or_create(
            content_type=ContentType.objects.get_for_model(model), codename=codename,
            defaults={"name": name})
        for codename, model in COMPLIANCE_PERMISSIONS:
            ct = ContentType.objects.get_for_model(model)
            default_name = f"Can view {model._meta.verbose_name}"
            perm, _ = Permission.objects.get_or_create(
                content_type=ct, codename=codename,
                defaults={"name": names.get(codename, default_name)[:255]},
            )
            perms.append(perm)
        group, created = Group.objects.get_or_create(name=COMPLIANCE_GROUP)
        group.permissions.set(perms)
    return group, created
