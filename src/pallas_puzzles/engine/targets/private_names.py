"""Private JAX names as data: each with the versions it was checked on, looked up on the running JAX.

Every family of targets keeps the private JAX names it uses in one adapter, its `jax_private.py`
(pallas_call/, tpu_multichip/, mosaic_gpu/): a table of `PrivateName`s, and the accessors the
rest of the family imports them through. `PrivateNames.misplaced` looks every name up on the
running JAX, so an upgrade says in one line what moved (tests/engine/test_jax_private.py)
instead of breaking the hooks one at a time. This module names no private JAX itself.

Imports no JAX: the adapters are imported by modules the CLI reads without JAX; a name's
module is imported only when it is asked for.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from types import CodeType, ModuleType
from typing import Any, Literal, NamedTuple

# How a family uses a name, which is also how it is looked up:
# - read: looked up and used as it is;
# - patched: replaced by a hook (assigned on JAX's module or class) or, for a primitive's `impl`,
#   redefined with def_impl;
# - field: read from the interpreter's objects: a class attribute, property or dataclass field,
#   or an attribute the class's own code assigns (`self.name = ...`);
# - global: set by a hook in the module, shadowing a builtin that the module's code calls;
# - mirrored: its rules are restated in the family's code (never called): a change means rechecking;
# - blocked: a module made to fail on import in some checkers: found on disk, never imported.
Use = Literal["read", "patched", "field", "global", "mirrored", "blocked"]


class PrivateName(NamedTuple):
    """A private module, or an attribute reached from one (dotted: "DMA.execute_write")."""

    module: str
    attribute: str = ""
    use: Use = "read"
    on: tuple[str, ...] | None = None  # the checked jax versions it exists on; None: every one

    def __str__(self) -> str:
        return f"{self.module}.{self.attribute}" if self.attribute else self.module


class PrivateNames:
    """One family's table: the jax versions it was checked on and every private name it uses.
    (Plain classes, not dataclasses: the CLI imports the tables, and a dataclass costs it 0.7 ms.)"""

    def __init__(self, family: str, checked_on: tuple[str, ...], names: tuple[PrivateName, ...]) -> None:
        self.family, self.checked_on, self.names = family, checked_on, names
        unchecked = [f"{name} on {v}" for name in names for v in name.on or () if v not in checked_on]
        if unchecked:
            raise ValueError(f"{family}: listed on versions it was not checked on: {', '.join(unchecked)}")

    def patched(self) -> tuple[PrivateName, ...]:
        """The names whose value a hook replaces in JAX's own module or class."""
        return tuple(name for name in self.names if name.use in ("patched", "global"))

    def expected(self, name: PrivateName, version: str) -> bool | None:
        """Should `name` exist on this jax version? None: not known (an unchecked version, and a name
        that exists on some checked versions only)."""
        if name.on is None:
            return True
        return version in name.on if version in self.checked_on else None

    def misplaced(self, version: str) -> tuple[list[str], list[str]]:
        """(names that should exist on `version` and do not: moved or vanished, names listed as absent
        there that exist), looked up on the running JAX."""
        missing, unlisted = [], []
        for name in self.names:
            wanted = self.expected(name, version)
            if wanted is not None and exists(name) != wanted:
                (missing if wanted else unlisted).append(str(name))
        return missing, unlisted


def names(module: str, *attributes: str, use: Use = "read", on: tuple[str, ...] | None = None) -> list[PrivateName]:
    """Entries for several attributes of one module, used alike ("" for the module itself)."""
    return [PrivateName(module, attribute, use, on) for attribute in attributes or ("",)]


@functools.cache
def load(module: str) -> ModuleType:
    """A JAX module, imported on first use (a module object never changes: hooks patch it in place)."""
    return importlib.import_module(module)


def exists(name: PrivateName) -> bool:
    """Does the running JAX have this name, in the way its `use` says the family relies on it?"""
    if name.use == "blocked":
        return _module_file(name.module)
    try:
        module = load(name.module)
    except ImportError:
        return False
    if name.use == "global":
        return any(name.attribute in code.co_names for code in _code_of(module))
    owner_path, _, last = name.attribute.rpartition(".")
    try:
        owner = _follow(module, owner_path)
    except AttributeError:
        return False
    if name.use == "field":
        return isinstance(owner, type) and _has_field(owner, last)
    return not last or hasattr(owner, last)


def _follow(start: Any, dotted: str) -> Any:
    for part in filter(None, dotted.split(".")):
        start = getattr(start, part)
    return start


def _module_file(module: str) -> bool:
    """The module's file is on disk, looked for without importing its packages (a checker may have
    blocked one of them from importing, and a blocked module must stay unimported)."""
    import importlib.util
    from pathlib import Path

    top, _, rest = module.partition(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return False
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*rest.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _has_field(cls: type, field: str) -> bool:
    """A class attribute, property or dataclass field, or an attribute its methods assign on `self`."""
    import dis

    if hasattr(cls, field) or field in getattr(cls, "__dataclass_fields__", {}):
        return True
    for klass in cls.__mro__[:-1]:
        for code in _codes(vars(klass).values()):
            if any(i.opname == "STORE_ATTR" and i.argval == field for i in dis.get_instructions(code)):
                return True
    return False


def _code_of(module: ModuleType) -> Iterator[CodeType]:
    """The code of the functions and classes defined in this module (not those it imports)."""
    own = [value for value in vars(module).values() if getattr(value, "__module__", None) == module.__name__]
    classes = [vars(value).values() for value in own if isinstance(value, type)]
    yield from _codes([*own, *(member for members in classes for member in members)])


def _codes(values: Any) -> Iterator[CodeType]:
    """Code objects of functions (and their nested functions) among `values`, properties included, and
    of the functions a hook wrapped (functools.wraps keeps them as __wrapped__)."""
    for value in values:
        if isinstance(value, property):
            yield from _codes((value.fget, value.fset))
            continue
        function = getattr(value, "__func__", value)  # a classmethod or staticmethod
        code = getattr(function, "__code__", None)
        if isinstance(code, CodeType):
            yield from _nested(code)
        wrapped = getattr(function, "__wrapped__", None)  # JAX's own function, under a hook's wrapper
        if wrapped is not None:
            yield from _codes((wrapped,))


def _nested(code: CodeType) -> Iterator[CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            yield from _nested(constant)
