"""What the management commands share: writing a document to ``--out FILE`` or to standard
output."""

from django.core.management.base import CommandError


def write_document(command, text, out, done):
    """Write ``text`` to the file ``out``, then ``done`` on standard output; with no ``out``,
    ``text`` itself on standard output. A file that cannot be written is a ``CommandError``."""
    if not out:
        command.stdout.write(text, ending="")
        return
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise CommandError(f"Cannot write {out}: {exc}") from None
    command.stdout.write(done)
