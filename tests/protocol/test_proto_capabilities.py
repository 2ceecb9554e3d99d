import ast
from pathlib import Path

import a2ui.protocol as protocol
from a2ui.protocol import COMPONENT_TYPES, init_result, server_capabilities


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


def test_public_names_exported():
    for name in protocol.__all__:
        assert hasattr(protocol, name), name


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
    }
    package = Path(protocol.__file__).parent
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= allowed, (source.name, roots)
