"""{% a2ui_client %}: which agent the embedded client talks to."""

import pytest
from django.template import Context, Template
from django.test import RequestFactory

from a2ui import tokens

pytestmark = pytest.mark.django_db


def render(source, **context):
    request = RequestFactory().get("/")
    return Template("{% load a2ui %}" + source).render(Context({"request": request, **context}))


def test_default_client_names_no_agent():
    html = render("{% a2ui_client %}")
    assert 'data-agent=""' in html
    assert "main.js" in html


def test_named_agent_is_passed_to_the_client():
    tokens.create_agent("billing-bot", display_name="Billing")
    html = render('{% a2ui_client agent="billing-bot" %}')
    assert 'data-agent="billing-bot"' in html
    assert "main.js" in html


@pytest.mark.parametrize("setup", ["missing", "revoked"])
def test_unknown_or_revoked_agent_shows_a_message_not_a_client(setup):
    if setup == "revoked":
        agent, _ = tokens.create_agent("old-bot")
        agent.is_active = False
        agent.save()
    html = render('{% a2ui_client agent="old-bot" %}')
    assert "no active agent named" in html
    assert "old-bot" in html
    assert "main.js" not in html and "data-a2ui-client" not in html


def test_agent_name_from_a_variable_is_escaped():
    html = render("{% a2ui_client agent=name %}", name="<b>x</b>")
    assert "<b>" not in html and "&lt;b&gt;" in html


@pytest.mark.parametrize(("source", "shown"), [
    ("{% a2ui_client %}", "0"),  # default: the chat box comes with the first activity
    ("{% a2ui_client chat=True %}", "1"),
    ("{% a2ui_client chat=False %}", "0"),
    ("{% a2ui_client chat=flag %}", "1"),
])
def test_the_chat_option_is_the_data_attribute_the_client_reads(source, shown):
    html = render(source, flag="yes")
    assert f'data-chat="{shown}"' in html
    assert html.count("data-chat=") == 1
