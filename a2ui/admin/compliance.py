"""Admin pages of compliance staff, under the audit trail: verify the hash chain and download a
signed checkpoint (``a2ui.verify_auditevent``), and a person's data: export
(``a2ui.export_person``), erasure dry run (either) and erasure (``a2ui.erase_person``, which
the "a2ui compliance" group does not hold). Thin: ``a2ui.compliance.chain`` and
``a2ui.compliance.person`` do the work, and audit each run."""

import json

from asgiref.sync import async_to_sync
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from a2ui.compliance import access, person
from a2ui.compliance import chain as auditchain
from a2ui.infra import caps
from a2ui.push import revocation

VERIFY = "a2ui.verify_auditevent"
EXPORT = "a2ui.export_person"
ERASE = "a2ui.erase_person"


def export_refusal(request):
    """None, or the 429 (``Retry-After``, JSON message) of an export past
    ``RATE_EXPORTS_PER_MINUTE`` of the officer or ``RATE_PER_ADDRESS_PER_MINUTE`` of the
    address (``caps.check_rate``), before anything is read or audited."""
    try:
        async_to_sync(caps.check_rate)("export", f"user:{request.user.pk}",
                                       caps.address_of_request(request))
    except caps.RateLimited as exc:
        return HttpResponse(json.dumps({"error": {"message": exc.message, "data": exc.data}}),
                            status=429, content_type="application/json",
                            headers={"Retry-After": str(exc.retry_after)})
    return None


class ComplianceViewsMixin:
    """Mixed into the AuditEvent admin: its extra URLs and views."""

    def compliance_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("verify/", wrap(self.verify_view), name="a2ui_auditevent_verify"),
            path("checkpoint.json", wrap(self.checkpoint_view),
                 name="a2ui_auditevent_checkpoint"),
            path("person/", wrap(self.person_view), name="a2ui_auditevent_person"),
            path("erasers/", wrap(self.erasers_view), name="a2ui_auditevent_erasers"),
        ]

    def _context(self, request, title, **extra):
        return {**self.admin_site.each_context(request), "opts": self.model._meta,
                "title": title, **extra}

    def verify_view(self, request):
        if not request.user.has_perm(VERIFY):
            raise PermissionDenied
        result = None
        if request.method == "POST":
            result = auditchain.run_verify(actor=request.user)
        elif request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        return TemplateResponse(request, "admin/a2ui/auditevent/verify.html", self._context(
            request, "Verify the audit trail", result=result))

    def checkpoint_view(self, request):
        if not request.user.has_perm(VERIFY):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        cp = auditchain.write_checkpoint(actor=request.user)
        response = HttpResponse(auditchain.dumps(cp) + "\n",
                                content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="a2ui-audit-checkpoint-{cp["site"]}-{cp["seq"]}.json"')
        return response

    def person_view(self, request):
        user = request.user
        may_export, may_erase = user.has_perm(EXPORT), user.has_perm(ERASE)
        if not (may_export or may_erase):
            raise PermissionDenied
        context = self._context(request, "A person's data", may_export=may_export,
                                may_erase=may_erase, report=None, identifier="")
        if request.method == "GET":
            return TemplateResponse(request, "admin/a2ui/auditevent/person.html", context)
        if request.method != "POST":
            return HttpResponseNotAllowed(["GET", "POST"])
        identifier = request.POST.get("user", "")
        action = request.POST.get("action", "")
        context["identifier"] = identifier[:150]
        needed = {"export": may_export, "dry_run": True, "erase": may_erase}
        if action not in needed:
            messages.error(request, "Choose export, dry run or erase.")
            return TemplateResponse(request, "admin/a2ui/auditevent/person.html", context,
                                    status=400)
        if not needed[action]:
            raise PermissionDenied
        try:
            target = person.find_user(identifier)
        except person.PersonError as exc:
            messages.error(request, str(exc))
            return TemplateResponse(request, "admin/a2ui/auditevent/person.html", context,
                                    status=400)
        if action == "export":
            refused = export_refusal(request)
            if refused is not None:
                return refused
            text = person.dumps(person.export(target, actor=user)) + "\n"
            response = HttpResponse(text, content_type="application/json; charset=utf-8")
            stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
            response["Content-Disposition"] = (
                f'attachment; filename="a2ui-person-{target.pk}-{stamp}.json"')
            return response
        if action == "erase" and request.POST.get("confirm") != "yes":
            messages.error(request, "Tick the confirmation to erase (or run a dry run first).")
            return TemplateResponse(request, "admin/a2ui/auditevent/person.html", context,
                                    status=400)
        context["report"] = revocation.erase_person(target, actor=user,
                                                        dry_run=action == "dry_run")
        return TemplateResponse(request, "admin/a2ui/auditevent/person.html", context)

    def erasers_view(self, request):
        """Superusers give or take back the erase permission (audited)."""
        if not request.user.is_superuser:
            raise PermissionDenied
        status = 200
        if request.method == "POST":
            action, username = request.POST.get("action"), request.POST.get("user", "")[:150]
            User = get_user_model()
            target = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
            if action not in ("grant", "withdraw") or target is None:
                messages.error(request, f"No user named {username!r}." if target is None
                               else "Choose grant or withdraw.")
                status = 400
            elif access.set_erase(target, action == "grant", actor=request.user):
                may = "now" if action == "grant" else "no longer"
                messages.success(request, f"{username} may {may} erase a person's data.")
            else:
                messages.info(request, f"{username}: nothing to change.")
        elif request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        return TemplateResponse(request, "admin/a2ui/auditevent/erasers.html", self._context(
            request, "Who may erase a person's data", erasers=access.erasers()), status=status)
