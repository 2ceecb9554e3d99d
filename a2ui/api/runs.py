"""REST for an agent's side of AG-UI 1.0 runs (docs/agents.md, "Runs"), agent key only.

``GET /api/v4/agui/runs[?session_id=]``: the agent's running runs, each as its
``agui.run_started`` notice said (an agent with no socket polls this).
``POST /api/v4/sessions/<id>/runs/finish`` ``{"run_id", "result"?}`` and
``POST /api/v4/sessions/<id>/runs/error`` ``{"run_id", "message", "code"?}`` end one: 200
``{"ended": true, "delivered": bool, "seq": n}``; a run that is not running is 400
(``data.path: "run_id"``, ``data.stream_lost`` when its stream was lost), a
session not the agent's 404.
"""

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from a2ui.api.base import A2UIAPIView, A2UIAsyncAPIView, session_id_query
from a2ui.api.permissions import IsAgent
from a2ui.runs import records as runs


def _body(request):
    if not isinstance(request.data, dict):
        raise ValidationError({"detail": "Send a JSON object."})
    return request.data


class AgentRunsView(A2UIAPIView):
    permission_classes = [IsAgent]

    @extend_schema(responses={200: dict})
    def get(self, request):
        session_id = session_id_query(request)
        return Response({"runs": runs.running(request.auth.id, session_id)})


class RunFinishView(A2UIAsyncAPIView):
    permission_classes = [IsAgent]

    @extend_schema(request=dict, responses={200: dict})
    async def post(self, request, session_id):
        body = _body(request)
        return Response(await runs.afinish(request.auth.id, session_id, body.get("run_id"),
                                           body.get("result"), path="run_id"))


class RunErrorView(A2UIAsyncAPIView):
    permission_classes = [IsAgent]

    @extend_schema(request=dict, responses={200: dict})
    async def post(self, request, session_id):
        body = _body(request)
        return Response(await runs.aerror(request.auth.id, session_id, body.get("run_id"),
                                          body.get("message"), body.get("code"),
                                          path="run_id"))
