"""The example project's own deploy checks (``manage.py check --deploy``)."""

import os

from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def check_secret_key(app_configs, **kwargs):
    """a2ui_project.W001: the development key the settings generate is not for production."""
    if os.environ.get("DJANGO_SECRET_KEY"):
        return []
    return [Warning(
        "DJANGO_SECRET_KEY is not set: the settings use a development key generated into "
        ".secret_key on this machine. Processes on other machines would sign sessions, CSRF "
        "tokens and stream tokens with other keys, and anyone who reads the checkout has it.",
        hint="Set DJANGO_SECRET_KEY to a long random value kept out of the repository "
             "(the same on every process).", id="a2ui_project.W001")]
