import ast
from pathlib import Path

import a2ui
from a2ui.core.content.components import COMPONENT_TYPES
from a2ui.jsonrpc.capabilities import init_result, server_capabilities


def test_server_capabilities_matches_seed_example():
    assert server_capabilities(1048576, 60) == {
        "max_payload_size": 1048576,
        "supported_components": list(COMPONENT_TYPES),
        "rate_limit_per_minute": 60,
    }


def test_extras_and_init_result():
    caps = server_capabilities(10, 5, protocol_versions=["2026-02-20"])
    assert caps["protocol_versions"] == ["2026-02-20"]
    assert init_result("s", caps) == {"session_id": "s", "server_capabilities": caps}


def test_sans_io_imports_only_stdlib_and_nh3():
    allowed = {
        "__future__",
        "collections",
        "dataclasses",
        "enum",
        "hashlib",
        "html",
        "ipaddress",
        "json",
        "re",
        "typing",
        "unicodedata",
        "urllib",
        "uuid",
        "itertools",
        "nh3",
        # JSON Schema validation, as a2ui.core.surfaces validates v0.9 catalogs (no $ref is
        # retrieved): a host project's own component types (a2ui.core.content.customtypes).
        "jsonschema_rs",
    }
    root = Path(a2ui.__file__).parent
    sources = [*(root / "core" / "content").glob("*.py"), *(root / "rpc").glob("*.py")]
    assert len(sources) > 10
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                if node.module.startswith(("a2ui.core.", "a2ui.rpc.")) or \
                        node.module in ("a2ui.core", "a2ui.rpc"):
                    assert not node.module.startswith("a2ui.core.adapters"), source.name
                    continue  # the core's own sans-I/O modules
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= allowed, (source.name, roots)
