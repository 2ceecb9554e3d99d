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


def erasers():
    """The active users who may erase a person's data: the permission given to them or to a
    group of theirs, and the superusers."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    codename = ERASE_PERMISSION[0]
    perm = Q(user_permissions__codename=codename, user_permissions__content_type__app_label="a2ui")
    group = Q(groups__permissions__codename=codename,
              groups__permissions__content_type__app_label="a2ui")
    return (get_user_model().objects.filter(is_active=True)
            .filter(perm | group | Q(is_superuser=True)).distinct().order_by("username"))


def set_erase(user, granted, *, actor=None):
    """Give ``user`` the erase permission (``a2ui.erase_person``), made staff so the admin
    shows them the page, or take it back; audited as ``person.erase_permission``
    (``details.granted``). Returns whether anything changed (nothing changed: no event)."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    from a2ui.compliance import audit

    codename, model, name = ERASE_PERMISSION
    with transaction.atomic():
        perm, _ = Permission.objects.get_or_create(
            content_type=ContentType.objects.get_for_model(model), codename=codename,
            defaults={"name": name})
        held = user.user_permissions.filter(pk=perm.pk).exists()
        if held == granted:
            return False
        if granted:
            user.user_permissions.add(perm)
            if not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
        else:
            user.user_permissions.remove(perm)
        audit.record("person.erase_permission", actor=actor, target=("user", user.pk),
                     details={"granted": granted, "user": user.get_username()})
    return True
