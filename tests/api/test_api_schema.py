"""The OpenAPI schema is true (issue 26): every HTTP endpoint of the README's table, the
agent-key Bearer scheme on the agents' endpoints, and no drf-spectacular warning."""

import json
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_http_paths():
    """The HTTP paths of the README's endpoint table, as the schema spells them."""
    table = README.read_text().split("## Endpoints", 1)[1].split("\n## ", 1)[0]
    found = set()
    for line in table.splitlines():
        first = line.split(" | ")[0]
        for path in re.findall(r"`(?:[A-Z/]+ )?(/(?:api/v4|mcp|a2ui/(?:healthz|readyz))[^`\[]*)`",
                               first):
            path = path.replace("<id>", "{session_id}").rstrip("/")
            head, _, tail = path.partition("\\|")
            found.add(head)
            if tail:  # ".../runs/finish\|error"
                found.add(head.rsplit("/", 1)[0] + "/" + tail)
        if "…/surfaces/stream" in first:
            found.add("/api/v4/sessions/{session_id}/surfaces/stream")
    return found


def test_the_readme_names_the_endpoints_this_test_reads():
    paths = readme_http_paths()
    assert {"/api/v4/stream-token", "/mcp", "/api/v4/agui/run", "/a2ui/readyz",
            "/api/v4/sessions/{session_id}/runs/error"} <= paths, paths


@pytest.mark.django_db
def test_spectacular_fails_on_no_warning_and_lists_every_readme_endpoint(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--fail-on-warn", "--file", str(out))  # CommandError on a warning
    schema = yaml.safe_load(out.read_text())
    missing = readme_http_paths() - set(schema["paths"])
    assert not missing, missing
    security = {(path, method): [next(iter(s), None) for s in op.get("security", [])]
                for path, item in schema["paths"].items() for method, op in item.items()}
    assert security[("/api/v4/requests/take", "post")] == ["agentKey"]
    assert security[("/api/v4/sessions/{session_id}/messages", "post")] == ["agentKey"]
    assert "agentKey" not in security[("/api/v4/stream-token", "post")]
    assert schema["components"]["securitySchemes"]["agentKey"]["scheme"] == "bearer"
    run = schema["paths"]["/api/v4/agui/run"]["post"]
    assert "text/event-stream" in run["responses"]["200"]["content"]
    assert run["requestBody"]["content"]["application/json"]["schema"]["required"]


@pytest.mark.django_db
def test_the_apps_schema_url_serves_the_same(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert readme_http_paths() <= set(schema["paths"])
