from django.urls import path

from a2ui.api import consents, views

urlpatterns = [
    path("v4/stream-token", views.StreamTokenView.as_view(), name="a2ui-stream-token"),
    # The dispatch table's session pushes (surfaces, agui, ...: a2ui.core.agentmethods).
    *views.session_push_urls(),
    path("v4/requests", views.AgentRequestsView.as_view(), name="a2ui-agent-requests"),
    path("v4/requests/take", views.AgentRequestsTakeView.as_view(),
         name="a2ui-agent-requests-take"),
    path("v4/consents", consents.ConsentListView.as_view(), name="a2ui-consents"),
    path("v4/consents/revoke", consents.ConsentRevokeTypeView.as_view(),
         name="a2ui-consents-revoke-type"),
    path("v4/consents/<int:pk>/revoke", consents.ConsentRevokeView.as_view(),
         name="a2ui-consent-revoke"),
]
