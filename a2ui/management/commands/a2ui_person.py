"""A person's data on request: ``manage.py a2ui_person export USER [--out FILE]`` and
``manage.py a2ui_person erase USER [--dry-run]`` (docs/compliance.md, "A person's data")."""

from django.core.management.base import BaseCommand, CommandError

from a2ui.compliance import person
from a2ui.management.output import write_document
from a2ui.push import revocation


class Command(BaseCommand):
    help = (
        "export: write everything a2ui holds about one person (sessions with their components, "
        "requests and answers, surfaces and activity; consents; stream token metadata; the "
        "audit events about them) as one JSON document. erase: close their live sessions, "
        "revoke their tokens, delete or anonymize that data and redact those audit events "
        "(the hash chain still verifies); --dry-run only counts. USER is a username or #ID. "
        "Each run is itself an audit event."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        ex = sub.add_parser("export", help="Export one person's data as JSON.")
        ex.add_argument("user", metavar="USER")
        ex.add_argument("--out", metavar="FILE", default=None,
                        help="Write to FILE (default: standard output).")
        er = sub.add_parser("erase", help="Erase one person's data.")
        er.add_argument("user", metavar="USER")
        er.add_argument("--dry-run", action="store_true",
                        help="Report what would be erased; change nothing.")

    def handle(self, *args, what=None, user=None, **options):
        try:
            target = person.find_user(user)
        except person.PersonError as exc:
            raise CommandError(str(exc)) from None
        if what == "export":
            write_document(self, person.dumps(person.export(target)) + "\n", options["out"],
                           f"Exported user #{target.pk} to {options['out']}.")
            return
        report = revocation.erase_person(target, dry_run=options["dry_run"])
        for line in report.lines():
            self.stdout.write(line)
        if report.left:
            raise CommandError("Erasure incomplete: something of theirs is still held (run it "
                               "again; see the lines above).")
        if not options["dry_run"]:
            self.stdout.write(self.style.SUCCESS("Erasure done."))
