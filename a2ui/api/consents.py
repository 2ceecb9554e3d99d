"""A person's consents over REST: list them, revoke one or a whole type.

    GET  /api/v4/consents                  your consent records, newest first, and the state of
                                           each required type
    POST /api/v4/consents/<id>/revoke      revoke one record in force (404 if not yours,
                                           409 if not in force)
    POST /api/v4/consents/revoke           {"consent_type": "..."}: revoke that type

Revoking takes effect at once on every live session of yours, in every process: the agent is
told (``consent.changed``) and requests that need the consent are refused with -32010.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from a2ui.api.base import A2UIAPIView, rate_limit
from a2ui.api.permissions import IsPerson
from a2ui.consent import choices as consent
from a2ui.models import A2UIConsentRecord

MAX_LISTED = 500


class ConsentRecordSerializer(serializers.ModelSerializer):
    session_id = serializers.UUIDField(allow_null=True)
    in_force = serializers.BooleanField(source="is_active")

    class Meta:
        model = A2UIConsentRecord
        fields = ["id", "consent_type", "granted", "granted_at", "revoked_at", "in_force",
                  "session_id"]


class RevokeTypeSerializer(serializers.Serializer):
    consent_type = serializers.CharField(max_length=consent.MAX_TYPE_LENGTH)


def _conflict(message):
    return Response({"detail": message}, status=status.HTTP_409_CONFLICT)


class ConsentListView(A2UIAPIView):
    """Your consent records and, for each required type, whether it is granted now."""

    permission_classes = [IsPerson]

    @extend_schema(responses={200: ConsentRecordSerializer(many=True)})
    def get(self, request):
        records = (
            A2UIConsentRecord.objects.filter(user=request.user)
            .order_by("-granted_at", "-id")[:MAX_LISTED]
        )
        active = consent.active_types(request.user.pk)
        required = [
            {**d, "granted": d["type"] in active}
            for d in consent.describe(consent.required_types())
        ]
        return Response({
            "consents": ConsentRecordSerializer(records, many=True).data,
            "required": required,
        })


class ConsentRevokeView(A2UIAPIView):
    """Revoke one of your consent records that is in force."""

    permission_classes = [IsPerson]

    @extend_schema(request=None, responses={
        200: ConsentRecordSerializer, 404: OpenApiResponse(description="Not yours or unknown"),
        409: OpenApiResponse(description="Already revoked, or a refusal"),
    })
    def post(self, request, pk):
        rate_limit("consent", request)
        record = A2UIConsentRecord.objects.filter(pk=pk, user=request.user).first()
        if record is None:
            raise NotFound("No such consent record of yours.")
        if not record.granted:
            return _conflict("This record is a refusal; there is nothing to revoke.")
        if record.revoked_at is not None:
            return _conflict("This consent is already revoked.")
        consent.revoke_and_notify([record], request.user)
        record.refresh_from_db()
        return Response(ConsentRecordSerializer(record).data)


class ConsentRevokeTypeView(A2UIAPIView):
    """Revoke every record in force of one consent type."""

    permission_classes = [IsPerson]

    @extend_schema(operation_id="consents_revoke_type", request=RevokeTypeSerializer,
                   responses={200: dict, 409: dict})
    def post(self, request):
        body = RevokeTypeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rate_limit("consent", request)
        consent_type = body.validated_data["consent_type"]
        if consent_type not in consent.known_types():
            raise ValidationError({"consent_type": [
                f"Unknown consent type; expected one of {consent.known_types()}."]})
        records = A2UIConsentRecord.objects.filter(
            user=request.user, consent_type=consent_type, granted=True, revoked_at__isnull=True
        )
        if not records.exists():
            return _conflict(f"You have no {consent_type} consent in force.")
        changes = consent.revoke_and_notify(records, request.user)
        return Response({"consent_type": consent_type, "revoked": bool(changes)})
