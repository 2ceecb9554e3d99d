"""Who agreed to what: a person's consent choices."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from a2ui.models.sessions import A2UISessionLog


class A2UIConsentRecord(models.Model):
    """A consent given or refused in a session (seed 000 section 8.4)."""

    session = models.ForeignKey(
        A2UISessionLog, null=True, blank=True, on_delete=models.SET_NULL, related_name="consents"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
        related_name="a2ui_consents",
    )
    consent_type = models.CharField(max_length=64, db_index=True)
    granted = models.BooleanField()
    granted_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-granted_at"]
        verbose_name = "A2UI consent record"

    def __str__(self):
        return f"{self.consent_type}: {'granted' if self.granted else 'refused'}"

    @property
    def is_active(self):
        return self.granted and self.revoked_at is None
