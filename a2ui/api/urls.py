from django.urls import path

from . import views

urlpatterns = [
    path("v4/stream-token", views.StreamTokenView.as_view(), name="a2ui-stream-token"),
    path(
        "v4/sessions/<uuid:session_id>/messages",
        views.SessionMessagesView.as_view(),
        name="a2ui-session-messages",
    ),
]
