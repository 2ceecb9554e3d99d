"""The audit trail's hash chain: ``manage.py a2ui_audit verify [--checkpoint FILE]`` and
``manage.py a2ui_audit checkpoint [--out FILE]`` (docs/compliance.md, "The hash chain")."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from a2ui.compliance import chain as auditchain
from a2ui.management.output import write_document


class Command(BaseCommand):
    help = (
        "verify: walk the audit trail's hash chain and name the first broken link (an edited, "
        "deleted, reordered or inserted event); with --checkpoint FILE, also check the trail "
        "against a signed checkpoint written earlier (which detects deleting the newest "
        "events). checkpoint: print (or write to --out) a signed checkpoint of the newest "
        "event, to keep off this machine. Each run is itself an audit event."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        verify = sub.add_parser("verify", help="Verify the chain.")
        verify.add_argument("--checkpoint", metavar="FILE", action="append", default=[],
                            help="A checkpoint written by 'checkpoint'; repeatable.")
        verify.add_argument("--site", default=None, help="The chain (A2UI['AUDIT_SITE']).")
        cp = sub.add_parser("checkpoint", help="Write a signed checkpoint (JSON).")
        cp.add_argument("--out", metavar="FILE", default=None,
                        help="Write it to FILE instead of standard output.")
        cp.add_argument("--site", default=None, help="The chain (A2UI['AUDIT_SITE']).")

    def handle(self, *args, what=None, **options):
        if what == "verify":
            return self.verify(options["checkpoint"], options["site"])
        return self.checkpoint(options["out"], options["site"])

    def verify(self, files, site):
        checkpoints = []
        for name in files:
            try:
                with open(name, encoding="utf-8") as fh:
                    checkpoints.append((name, json.load(fh)))
            except (OSError, ValueError) as exc:
                raise CommandError(f"Cannot read checkpoint {name}: {exc}") from None
        started = time.perf_counter()
        result = auditchain.run_verify(site_name=site, checkpoints=checkpoints)
        elapsed = time.perf_counter() - started
        if not result.ok:
            raise CommandError(f"Audit chain {result.site!r} BROKEN: {result.problems[0]}")
        self.stdout.write(self.style.SUCCESS(
            f"Audit chain {result.site!r} verified: {result.checked} events "
            f"(seq {result.first_seq or 0}..{result.last_seq or 0}, {result.redacted} erased, "
            f"{result.purged} purged under signed anchors), {len(checkpoints)} checkpoint(s), "
            f"in {elapsed:.2f} s."))

    def checkpoint(self, out, site):
        cp = auditchain.write_checkpoint(site_name=site)
        write_document(self, auditchain.dumps(cp) + "\n", out,
                       f"Checkpoint of {cp['site']!r} at seq {cp['seq']} written to {out}.")
