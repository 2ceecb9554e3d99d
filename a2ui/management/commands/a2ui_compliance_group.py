"""Create or reset the "a2ui compliance" group: ``manage.py a2ui_compliance_group``."""

from django.core.management.base import BaseCommand

from a2ui.compliance import access


class Command(BaseCommand):
    help = (
        'Create (or reset to exactly its permissions) the "a2ui compliance" group: view '
        "sessions, consents, the audit trail, stream tokens and agents, and run the terminate "
        "and revoke admin actions. Nothing else. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--add-user", action="append", default=[], metavar="USERNAME",
                            help="Also put this (staff) user in the group; repeatable.")

    def handle(self, *args, add_user=(), **options):
        from django.contrib.auth import get_user_model
        from django.core.management.base import CommandError

        group, created = access.ensure_compliance_group()
        self.stdout.write(
            f"{'Created' if created else 'Updated'} group {group.name!r} with "
            f"{group.permissions.count()} permissions."
        )
        User = get_user_model()
        for username in add_user:
            try:
                user = User.objects.get_by_natural_key(username)
            except User.DoesNotExist:
                raise CommandError(f"No user named {username!r}.") from None
            if not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            user.groups.add(group)
            self.stdout.write(f"Added {username} (staff) to {group.name!r}.")
