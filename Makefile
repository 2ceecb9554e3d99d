# The two commands of the README: `make demo` (server + demo agent) and `make test`.
# Both set up everything they need on a fresh machine with Python 3.11 and Node.

PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
# Test services: the real parts production uses. Override to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
PYTEST_ARGS ?=
# pytest-xdist workers for the test targets (most of a test's time is waiting: servers, sockets,
# the browser); 0 runs the tests in pytest's own process.
TEST_WORKERS ?= 3
# e.g. make demo DEMO_ARGS="--port 8080"; DEMO_ARGS="--agent pydantic-ai" serves a pydantic-ai
# agent too (offline model; a real one when OPENAI_API_KEY or A2UI_DEMO_MODEL is set)
DEMO_ARGS ?=
# e.g. make bench GATE_ARGS="--quick --gate" (bench/bench_gate.py, docs/performance.md)
GATE_ARGS ?=

.PHONY: demo test test-embedded install chromium lint bench clean vendor agents-venv

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,agents]'
	touch $@

# The agent frameworks that do not install beside the project's pins (LangGraph, Google ADK:
# agents-requirements.txt), for the live tests of remote agents: a venv of their own, whose
# agents run as processes (docs/remote-agents.md). About a minute with a warm pip cache.
AGENTS_VENV ?= .venv-agents
$(AGENTS_VENV)/.installed: agents-requirements.txt
	$(PYTHON) -m venv $(AGENTS_VENV)
	$(AGENTS_VENV)/bin/python -m pip install -q --upgrade pip
	$(AGENTS_VENV)/bin/python -m pip install -q -r agents-requirements.txt
	touch $@

agents-venv: $(AGENTS_VENV)/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The MCP host pages of the browser tests (the official MCP clients, ext-apps' AppBridge,
# @mcp-ui/client 5.x and 7.x, React): a package of its own, so its zod leaves the web client's
# pinned versions alone.
MCP_HOST := tests/browser/mcp_host
$(MCP_HOST)/node_modules/.installed: $(MCP_HOST)/package.json $(MCP_HOST)/package-lock.json
	npm ci --prefix $(MCP_HOST) --no-audit --no-fund --loglevel=error
	touch $@

install: $(VENV)/.installed node_modules/.installed $(MCP_HOST)/node_modules/.installed \
		$(AGENTS_VENV)/.installed

# Rebuild the web client's vendored bundle (a2ui/static/a2ui/vendor/, committed, shipped in the
# wheel) with esbuild after changing package.json/package-lock.json. Development only: a host
# project needs no npm. tests/web/test_web_client_assets.py fails while the bundle is stale.
vendor: node_modules/.installed
	npm run build --silent

chromium:
	@test -x /usr/bin/chromium || bash scripts/install-chromium.sh

# Stops on Ctrl-C, SIGTERM or SIGHUP (also as a background job: `setsid make demo < /dev/null &`).
# Needs only the venv: the web client's bundle is vendored (no npm).
demo: $(VENV)/.installed
	$(PY) manage.py a2ui_demo $(DEMO_ARGS)

# The whole suite against PostgreSQL and Redis: in-process tests, live Daphne tests, browser tests,
# in one pytest run on xdist workers (the waiting live tests overlap the in-process ones); a line
# of progress per tier every minute and when a tier finishes (tests/tierprogress.py).
test: install chromium
	@echo "== the whole suite: in-process, live Daphne + PostgreSQL + Redis, and Chromium"
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) A2UI_REQUIRE_LIVE=1 \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The in-process tier once more on the embedded defaults (SQLite, in-memory channel layer).
test-embedded: install
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -m "not live and not browser" \
		-n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy  # the typed public surface ([tool.mypy] in pyproject.toml)

# Push throughput of this tree against bench/BASELINE, interleaved in one run (the issue-11 gate;
# bench/bench_push.py remains for latency, the steady load and the bare websockets echo).
bench: install
	$(PY) bench/bench_gate.py $(GATE_ARGS)
	$(PY) bench/bench_v09_validation.py
	$(PY) bench/bench_soak.py --quick  # the full soak: bench/bench_soak.py (docs/performance.md)

clean:
	rm -rf $(VENV) $(AGENTS_VENV) node_modules $(MCP_HOST)/node_modules staticfiles .pytest_cache
