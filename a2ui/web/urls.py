from django.urls import path

from a2ui.web import views

app_name = "a2ui_web"

urlpatterns = [
    path("", views.client_page, name="client"),
]
