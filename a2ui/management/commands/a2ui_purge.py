"""Retention: ``manage.py a2ui_purge [--older-than DAYS] [--dry-run] [--anonymize]``."""

from django.core.management.base import BaseCommand, CommandError

from a2ui.compliance import purge
from a2ui.conf import a2ui_settings


def _days(value):
    try:
        days = int(value)
    except (TypeError, ValueError):
        raise CommandError(f"--older-than takes a whole number of days, got {value!r}.") from None
    if days < 0:
        raise CommandError("--older-than cannot be negative.")
    return days


class Command(BaseCommand):
    help = (
        "Delete (or anonymize) A2UI session data older than the retention period: closed "
        "sessions with their components, requests and surfaces, and expired stream tokens. "
        "Consent records and audit events are kept unless A2UI['PURGE_CONSENTS'] / "
        "A2UI['PURGE_AUDIT'] say otherwise."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than", dest="days", metavar="DAYS", default=None,
            help="Retention in days (default: A2UI['RETENTION_DAYS']).",
        )
        parser.add_argument(
            "--dry-run", action="store_true",
            help="Report what would be removed; change nothing.",
        )
        parser.add_argument(
            "--anonymize", action="store_true",
            help="Keep old session rows for statistics, without the person, token or client "
                 "info; their content is still deleted.",
        )

    def handle(self, *args, days=None, dry_run=False, anonymize=False, **options):
        days = a2ui_settings.RETENTION_DAYS if days is None else _days(days)
        try:
            report = purge.purge(days, dry_run=dry_run, anonymize=anonymize)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for line in report.lines():
            self.stdout.write(line)
        if not dry_run:
            self.stdout.write(self.style.SUCCESS("Purge done."))
