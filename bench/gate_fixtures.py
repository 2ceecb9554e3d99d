"""Fixtures of bench/bench_gate.py, made by the code of the tree under test.

    python bench/gate_fixtures.py TREE N OUT.json [--agui]

Imports Django and ``a2ui`` from TREE (the current tree or the baseline's copy), with the
environment bench_gate.py gives its servers, and writes to OUT.json a fresh bench agent's key
(no session limit; the previous bench agent and its sessions deleted), N stream tokens of a
bench user, and the path ``a2ui`` was imported from (bench_gate.py checks it is TREE's). With
``--agui`` (bench/bench_agui_push.py), also N ``stream_agui`` tokens (``agui_tokens``).
"""

import json
import os
import sys


def main(tree, n, out, agui=False):
    sys.path.insert(0, tree)
    os.chdir(tree)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    import a2ui
    from a2ui import tokens
    from a2ui.models import A2UISessionLog, Agent, StreamToken

    user, _ = get_user_model().objects.get_or_create(username="bench-user")
    A2UISessionLog.objects.filter(user=user).delete()
    StreamToken.objects.filter(user=user).delete()
    Agent.objects.filter(name="bench-agent").delete()
    agent, key = tokens.create_agent("bench-agent", display_name="Bench agent")
    agent.max_concurrent_sessions = 1_000_000
    agent.save(update_fields=["max_concurrent_sessions"])
    toks = [tokens.issue_stream_token(user, agent).token for _ in range(n)]
    data = {"agent_key": key, "tokens": toks, "a2ui": os.path.abspath(a2ui.__file__)}
    if agui:
        data["agui_tokens"] = [
            tokens.issue_stream_token(user, agent, "stream_agui").token
            for _ in range(n)]
    with open(out, "w") as f:
        json.dump(data, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], agui="--agui" in sys.argv[4:])
