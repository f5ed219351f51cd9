"""The registry of targets: a new target is one module here plus one line in BUILTIN.

A course names its chapters' targets by these names; a course (or a test) may also
name a class of its own as "package.module:ClassName", imported on demand, or
"/path/to/module.py:ClassName" (course.reader names a target module kept beside a
course file that way); a course's code runs, as any installed package's does. `for_check` picks the
target that runs a chapter on a backend or in a mode, through the chapter
target's `partners`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

from pallas_puzzles import environment
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.engine.targets.base import ProcessSetup, Target
from pallas_puzzles.engine.targets.blackwell.target import BlackwellTarget
from pallas_puzzles.engine.targets.device import Device
from pallas_puzzles.engine.targets.mosaic_gpu.target import MosaicGpuDevice, MosaicGpuTarget
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter
from pallas_puzzles.engine.targets.tpu_kernel.target import TpuKernel
from pallas_puzzles.engine.targets.tpu_lowering import TpuLowering
from pallas_puzzles.engine.targets.tpu_multichip.target import TpuMultichip
from pallas_puzzles.errors import UserError

__all__ = ["BUILTIN", "ProcessSetup", "Target", "for_check", "get", "partner_name", "process_groups", "shared_setup"]

BUILTIN: dict[str, type[Target]] = {
    TpuInterpreter.name: TpuInterpreter,
    TpuLowering.name: TpuLowering,
    Device.name: Device,
    TpuMultichip.name: TpuMultichip,
    TpuKernel.name: TpuKernel,
    MosaicGpuTarget.name: MosaicGpuTarget,
    MosaicGpuDevice.name: MosaicGpuDevice,
    BlackwellTarget.name: BlackwellTarget,
}


def get(name: str) -> type[Target]:
    """A target class by its registry name or as "module:ClassName"; one sentence when unknown."""
    if name in BUILTIN:
        return BUILTIN[name]
    module_name, _, attribute = name.rpartition(":") if ":" in name else ("", "", "")
    if attribute:
        try:
            module = _module_file(module_name) if module_name.endswith(".py") else importlib.import_module(module_name)
            found = getattr(module, attribute)
        except (ImportError, AttributeError, OSError, SyntaxError) as exc:
            raise UserError(f"The target {name!r} cannot be loaded ({type(exc).__name__}: {exc}).") from None
        if isinstance(found, type) and issubclass(found, Target):
            return found
        raise UserError(f"The target {name!r} is not a pallas_puzzles Target class.")
    raise UserError(f"There is no target {name!r}; the built-in ones are {', '.join(BUILTIN)} "
                    f"(or name a class as 'module:ClassName').")


@functools.cache
def _module_file(path: str) -> ModuleType:
    """A course's own target module, loaded from its file (course.reader names it by path)."""
    name = "pallas_puzzles_course_target_" + hashlib.sha256(path.encode()).hexdigest()[:16]
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise ImportError(f"no module at {path}")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # its classes are looked up by module name (dataclasses, pickling)
    found.loader.exec_module(module)
    return module


def partner_name(declared: str, backend: Backend, mode: Mode) -> str | None:
    """The name of the target that runs a chapter declared for `declared` on `backend` in `mode`;
    None when there is none (the chapter cannot run there)."""
    target = get(declared)
    if mode is Mode.LOWER:
        return target.partners.get("lower")
    if backend.interprets:
        return declared
    return target.partners.get(backend.name)


def process_groups(names: Sequence[str]) -> list[tuple[str, ...]]:
    """The declared targets `names` (in order, repeats allowed), grouped into the checker processes that
    can serve them: each group's targets share one process setup (ProcessSetup.can_share), in order
    of first appearance. Checks of a course's chapters run one group's pool after another. With the
    fast path off (PALLAS_PUZZLES_FAST=0) every target has checkers of its own, started for it alone."""
    if environment.FAST.turned_off():
        return [(name,) for name in dict.fromkeys(names)]
    groups: list[list[str]] = []
    for name in dict.fromkeys(names):
        setup = get(name).setup
        home = next((g for g in groups if all(get(other).setup.can_share(setup) for other in g)), None)
        if home is None:
            groups.append([name])
        else:
            home.append(name)
    return [tuple(group) for group in groups]


def shared_setup(names: Sequence[str]) -> ProcessSetup:
    """The setup of a process that serves every target of `names` (one of process_groups' groups)."""
    setup = get(names[0]).setup
    for name in names[1:]:
        setup = setup.with_devices_of(get(name).setup)
    return setup


def for_check(declared: str, backend: Backend, mode: Mode) -> Target:
    """A fresh instance of the target that runs `declared`'s chapters on `backend` in `mode`."""
    name = partner_name(declared, backend, mode)
    if name is None:
        raise UserError(f"The {declared} target has no way to run on the {backend.name} backend"
                        f"{' in lowering mode' if mode is Mode.LOWER else ''}.")
    return get(name)()
