"""Every environment variable the package reads is in one registry, read through it, with its meaning."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pallas_puzzles import environment

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pallas_puzzles"
REGISTRY = PACKAGE / "environment.py"


def _reads(source: str) -> list[int]:
    """Lines that read os.environ (or call os.getenv) directly. Setting a variable for JAX before it
    starts is not reading one: `os.environ[NAME] = ...` and `os.environ.setdefault(...)` are allowed."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("getenv", "getenvb"):
            found.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "environ" or (
                isinstance(node, ast.Name) and node.id == "environ"):
            parent = parents.get(node)
            writes = (isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store)) or (
                isinstance(parent, ast.Attribute) and parent.attr == "setdefault")
            if not writes and not isinstance(parent, ast.ImportFrom):
                found.append(node.lineno)
    return found


def test_the_package_reads_the_environment_only_through_the_registry():
    readers = {f"{path.relative_to(PACKAGE)}:{line}" for path in PACKAGE.rglob("*.py") if path != REGISTRY
               for line in _reads(path.read_text(encoding="utf-8"))}
    assert not readers, "read these through pallas_puzzles.environment, which names every variable"


@pytest.mark.parametrize("source", [
    "import os\nx = os.environ.get('A', '')",
    "import os\nx = os.environ['A']",
    "import os\nx = 'A' in os.environ",
    "import os\nx = dict(os.environ)",
    "import os\nx = os.getenv('A')",
    "from os import environ\nx = environ.get('A')",
])
def test_the_guard_sees_every_way_of_reading(source: str):
    assert _reads(source) == [2]


def test_the_guard_lets_the_checker_set_variables_for_jax():
    assert _reads("import os\nos.environ['XLA_FLAGS'] = 'x'\nos.environ.setdefault('JAX_PLATFORMS', 'cpu')") == []


def test_every_variable_has_one_name_and_a_meaning():
    names = [v.name for v in environment.VARIABLES]
    assert len(names) == len(set(names))
    registered = {value.name for value in vars(environment).values() if isinstance(value, environment.Variable)}
    assert registered == set(names), "every Variable defined is listed in VARIABLES"
    assert all(v.meaning.endswith(".") and len(v.meaning) > 30 for v in environment.VARIABLES)
    assert all(f.meaning and f.prefixes for f in environment.FAMILIES)


def test_a_variable_reads_its_value_and_a_switch_its_zero(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(environment.FAST.name, raising=False)
    assert environment.FAST.value() == "" and not environment.FAST.turned_off()
    monkeypatch.setenv(environment.FAST.name, " 0 ")
    assert environment.FAST.value() == " 0 " and environment.FAST.turned_off()
    monkeypatch.setenv(environment.FAST.name, "1")
    assert not environment.FAST.turned_off()


def test_a_family_is_read_by_its_prefixes_in_order(monkeypatch: pytest.MonkeyPatch):
    family = environment.Family(("PP_TEST_B", "PP_TEST_A"), "for this test.")
    monkeypatch.setenv("PP_TEST_B2", "b")
    monkeypatch.setenv("PP_TEST_A1", "a")
    monkeypatch.setenv("PP_TESTX", "not ours")
    assert family.items() == [("PP_TEST_A1", "a"), ("PP_TEST_B2", "b")]


def test_the_cache_home_is_xdg_else_the_home_folders_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert environment.cache_home() == tmp_path
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert environment.cache_home() == Path.home() / ".cache"
