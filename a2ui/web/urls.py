from django.urls import path

from a2ui.web import views

app_name = "a2ui_web"

urlpatterns = [
    path("", views.client_page, name="client"),
    # A login for people (any active user) that a host project can use: LOGIN_URL =
    # "a2ui_web:login" (README). A project with its own login keeps it instead.
    path("login/", views.login_view, name="login"),
    path("logout/", views.logout_view, name="logout"),
]
