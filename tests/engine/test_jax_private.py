"""Every private JAX name the engine uses is listed in its family's adapter, and is where the list says.

Each family of targets (pallas_call, tpu_multichip, mosaic_gpu) names private JAX only in its
`jax_private.py`, with the jax versions it was checked on. On this leg every name listed for
the running version must resolve, and every name listed as absent on it must not; a failure
says in one line, per adapter, which names moved or vanished. The names listed as patched are
exactly those the hooks replace, and no other module names jax._src.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from pallas_puzzles import versions
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets.private_names import PrivateName, PrivateNames, exists

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pallas_puzzles"
# Each family, and a target that installs its hooks.
TARGETS = {"pallas_call": "tpu-interpret", "tpu_multichip": "tpu-multichip", "mosaic_gpu": "mosaic-gpu",
           "blackwell": "blackwell"}
FAMILIES = tuple(TARGETS)
ADAPTERS = {family: PACKAGE / "engine" / "targets" / family / "jax_private.py" for family in FAMILIES}
PRIVATE = re.compile(r"jax(\.|/|\\\.)_src\b")  # a module path, a file path, or a regular expression


def adapter(family: str):
    return importlib.import_module(f"pallas_puzzles.engine.targets.{family}.jax_private")


def misplaced_line(table: PrivateNames, version: str) -> str:
    """One line: what in this table is not where it says on this version ("" when all is)."""
    missing, unlisted = table.misplaced(version)
    if not missing and not unlisted:
        return ""
    parts = [f"moved or vanished: {', '.join(missing)}"] if missing else []
    parts += [f"listed as absent on {version} but present: {', '.join(unlisted)}"] if unlisted else []
    checked = "" if version in table.checked_on else f" (not among those checked: {', '.join(table.checked_on)})"
    return f"jax {version}{checked}, {table.family} adapter: {'; '.join(parts)}"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_listed_private_name_is_where_its_adapter_says(family):
    line = misplaced_line(adapter(family).NAMES, jax.__version__)
    assert not line, line


def test_every_adapter_states_the_versions_it_was_checked_on_in_its_docstring():
    for family in FAMILIES:
        module = adapter(family)
        assert module.NAMES.checked_on == module.CHECKED_ON
        assert all(version in module.__doc__ for version in module.CHECKED_ON), family


@pytest.mark.parametrize("use", ["read", "patched", "field", "global", "mirrored", "blocked"])
def test_a_misspelt_name_is_reported_as_moved_whatever_its_use(use):
    """The lookup can fail: each way of looking a name up reports a name the running jax lacks."""
    interpreter = "jax._src.pallas.mosaic.interpret.interpret_pallas_call"
    misspelt = {"read": PrivateName(interpreter, "TPU_MEMORY_SPACE_NAMEZ", use),
                "patched": PrivateName(interpreter, "DMA.execute_wirte", use),
                "field": PrivateName(interpreter, "DMA.dst_semaphore", use),
                "global": PrivateName(interpreter, "no_such_builtin", use),
                "mirrored": PrivateName("jax._src.pallas.mosaic.lowring", "_check_block_mappings", use),
                "blocked": PrivateName("jax._src.pallas.mosaic_gpu.interpret.no_such_module", "", use)}[use]
    table = PrivateNames("probe", (jax.__version__,), (misspelt,))
    assert not exists(misspelt)
    assert misplaced_line(table, jax.__version__) == (
        f"jax {jax.__version__}, probe adapter: moved or vanished: {misspelt}")


def test_a_name_listed_absent_but_present_is_reported():
    present = PrivateName("jax._src.core", "Primitive", on=("0.0.1",))
    table = PrivateNames("probe", ("0.0.1", jax.__version__), (present,))
    assert misplaced_line(table, jax.__version__) == (
        f"jax {jax.__version__}, probe adapter: listed as absent on {jax.__version__} but present: {present}")


def test_a_field_is_found_where_the_class_assigns_it_and_a_global_where_the_module_calls_it():
    dma = "jax._src.pallas.mosaic.interpret.interpret_pallas_call"
    assert exists(PrivateName(dma, "DMA.dst_sem", "field"))  # a dataclass field without a default
    assert exists(PrivateName("jax._src.pallas.mosaic.interpret.shared_memory", "SharedMemory.num_cores", "field"))
    assert exists(PrivateName(dma, "DMA", "global"))  # the module's own code names it


def test_no_module_outside_the_adapters_mentions_jax_src():
    """A private JAX name anywhere else is one an upgrade can break without the adapter test noticing."""
    offenders = [str(path.relative_to(PACKAGE)) for path in sorted(PACKAGE.rglob("*.py"))
                 if path not in ADAPTERS.values() and PRIVATE.search(path.read_text())]
    assert offenders == [], f"private JAX named outside the adapters: {', '.join(offenders)}"
    assert all(PRIVATE.search(path.read_text()) for path in ADAPTERS.values())  # the guard sees them


def test_the_adapters_import_no_jax():
    """Modules the CLI reads without JAX import the adapters at module level."""
    probe = ("import sys\n" + "".join(f"import pallas_puzzles.engine.targets.{f}.jax_private\n" for f in FAMILIES)
             + "print('jax' in sys.modules, 'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


PATCH_PROBE = """
import importlib, json, sys, types
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets.private_names import exists, load

families = [importlib.import_module(f"pallas_puzzles.engine.targets.{f}.jax_private") for f in sys.argv[2:]]
listed = [name for family in families for name in family.NAMES.names]
modules = {}
for name in listed:
    try:
        modules[name.module] = load(name.module)
    except ImportError:
        pass

classes = {f"{path}.{key}": value for path, module in modules.items() for key, value in vars(module).items()
           if isinstance(value, type) and value.__module__ == path}  # JAX's own, before a hook swaps one

def state():
    # every attribute of the listed modules, of the classes they define, and each listed primitive's impl
    found = {f"{path}.{key}": value for path, module in modules.items() for key, value in vars(module).items()}
    for path, cls in classes.items():
        found.update({f"{path}.{key}": value for key, value in vars(cls).items()})
    for name in listed:
        if name.attribute.endswith("_p.impl") and exists(name):
            found[str(name)] = getattr(getattr(modules[name.module], name.attribute[:-5]), "impl")
    return found

before = state()
for target in sys.argv[2:]:
    targets.get(json.loads(sys.argv[1])[target])().start()
after = state()
replaced = {key for key, value in after.items() if key not in before or before[key] is not value}
replaced -= {key for key in replaced if isinstance(after[key], types.ModuleType)}  # a submodule imported
print(json.dumps(sorted(replaced)))
"""


def test_the_names_listed_as_patched_are_exactly_those_the_hooks_replace():
    """Start every target this leg runs, in a fresh process: each attribute of the listed private modules
    (or of the classes they define) that the hooks replace is listed as patched in an adapter, and each
    name listed as patched on this version is replaced."""
    running = versions.parse(jax.__version__)
    families = [f for f, name in TARGETS.items() if running >= versions.parse(targets.get(name).min_jax or "0")]
    done = subprocess.run([sys.executable, "-c", PATCH_PROBE, json.dumps(TARGETS), *families],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    replaced = set(json.loads(done.stdout.splitlines()[-1]))
    tables = [adapter(f).NAMES for f in families]
    patched = {str(name) for table in tables for name in table.patched()}
    patched_here = {str(name) for table in tables for name in table.patched()
                    if table.expected(name, jax.__version__) is not False}
    unlisted, untouched = sorted(replaced - patched), sorted(patched_here - replaced)
    assert not unlisted, f"jax {jax.__version__}: replaced by a hook, not listed as patched: {', '.join(unlisted)}"
    assert not untouched, f"jax {jax.__version__}: listed as patched, replaced by no hook: {', '.join(untouched)}"
