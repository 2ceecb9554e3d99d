from django.apps import AppConfig


class A2UIConfig(AppConfig):
    name = "a2ui"
    verbose_name = "Agent UI"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
