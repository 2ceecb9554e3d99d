"""docs/architecture.md's "Layers" is checked against the code: every module and package of
a2ui/ is in the import-linter layers contract (pyproject.toml) and in the doc's tree, and the
doc names no package that is not there."""

import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "a2ui"


def _top_level():
    names = set()
    for path in PACKAGE.iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            names.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            names.add(path.name)
    return names


def _contract_layers():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [set(re.findall(r"a2ui\.(\w+)", layer)) for layer in layers["layers"]]


def _doc_tree():
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Layers"):]
    tree = section[section.index("```") + 3:]
    tree = tree[:tree.index("```")]
    names = set()
    for line in tree.splitlines():
        if len(line) - len(line.lstrip()) > 12:
            continue  # a description's next line
        left = re.split(r"\s{3,}", line.strip())[0]  # the paths, before the description
        names.update(m.group(1) for token in left.split()
                     if (m := re.fullmatch(r"(\w+)(?:/|\.py)", token)))
    return names - {"a2ui"}


def test_every_package_is_in_the_layers_contract():
    named = set().union(*_contract_layers())
    assert _top_level() - named == set()
    assert named - _top_level() == set()


def test_every_package_is_in_the_documented_tree():
    top = _top_level()
    tree = _doc_tree()
    assert top - tree == set(), "missing from docs/architecture.md's Layers tree"
    nested = {p.name for p in PACKAGE.rglob("*") if p.is_dir()} | {
        p.stem for p in PACKAGE.rglob("*.py")}
    assert tree - top - nested == set(), "named in the tree, not in a2ui/"


def test_the_doc_and_the_contract_order_the_layers_alike():
    """The tree lists the layers top to bottom in the contract's order."""
    tree = (ROOT / "docs" / "architecture.md").read_text()
    tree = tree[tree.index("## Layers"):]
    order = [tree.index(f"  {sorted(layer)[0]}") if f"  {sorted(layer)[0]}" in tree else
             tree.index(f" {sorted(layer)[0]}") for layer in _contract_layers()]
    assert order == sorted(order)
