"""Settings for the MCP conformance suite's server (tests/live/test_live_mcp_conformance.py):
the project's, with the suite's fixture tools, resources and prompts on /mcp (test-only: the
system check a2ui.E006 refuses them with DEBUG off)."""

from a2ui_project.settings import *  # noqa: F403
from a2ui_project.settings import A2UI as _A2UI

DEBUG = True
A2UI = {**_A2UI, "MCP_CONFORMANCE_FIXTURES": True}
