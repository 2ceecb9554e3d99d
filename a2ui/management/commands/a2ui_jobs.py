"""``python manage.py a2ui_jobs``: the background jobs of a serving process, in one list
(``a2ui.infra.jobs``): name, kind (an asyncio task per event loop, or a thread), how often.

Imports what a serving process imports (the routing of every adapter), so that the list is
the one ``a2ui_serve`` runs; ``running`` is this command's own process (no: it serves nothing).
"""

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "List the background jobs a serving process runs (a2ui.infra.jobs)."

    def handle(self, *args, **options):
        from a2ui import asgi  # noqa: F401 - imports every module a serving process runs
        from a2ui.infra import jobs

        asgi.get_asgi_application()
        rows = sorted(jobs.registered())
        width = max((len(name) for name, *_ in rows), default=4)
        self.stdout.write(f"{'job':<{width}}  kind    every")
        for name, kind, interval, _ in rows:
            self.stdout.write(f"{name:<{width}}  {kind:<6}  {interval:g} s")
