"""Who may erase a person's data (``a2ui.erase_person``, held by no group):
``manage.py a2ui_erase_permission grant USER`` / ``withdraw USER`` / ``list``. Audited
(``person.erase_permission``); docs/compliance.md, "A person's data"."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from a2ui.compliance import access


class Command(BaseCommand):
    help = ("Grant or withdraw the permission to erase a person's data (a2ui.erase_person), "
            "or list who holds it. Each change is an audit event.")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        for name, text in (("grant", "Give USER the permission (and staff status)."),
                           ("withdraw", "Take the permission given to USER back.")):
            sub.add_parser(name, help=text).add_argument("user", metavar="USER",
                                                         help="username")
        sub.add_parser("list", help="Who may erase (with it, through a group, or superuser).")

    def handle(self, *args, what, user=None, **options):
        if what == "list":
            for each in access.erasers():
                how = "superuser" if each.is_superuser else "permission"
                self.stdout.write(f"{each.get_username()} ({how})")
            return
        User = get_user_model()
        try:
            target = User.objects.get_by_natural_key(user)
        except User.DoesNotExist:
            raise CommandError(f"No user named {user!r}.") from None
        changed = access.set_erase(target, what == "grant")
        state = "may erase" if what == "grant" else "may no longer erase (given directly)"
        self.stdout.write(f"{user} {state}." if changed else f"{user}: nothing to change.")
        if what == "withdraw" and target in access.erasers():
            self.stdout.write(f"{user} still may erase: a superuser, or through a group.")
