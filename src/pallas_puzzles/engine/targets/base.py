"""What a target is: one way of running a chapter's kernels, with everything that way needs.

A target owns what must hold in its checker process before JAX starts (a host
device count, imports to block), the hooks it installs and the entry points
they stand in for, its interpreter settings and its reset after a fault, how it
runs one shape case, how it explains a fault, and whether the TPU cost card
applies to what it ran. `engine/targets/__init__.py` is the registry.

Modules here import no jax at module level: the CLI reads a target's class
attributes (its process needs, its partners) without starting JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pathlib import Path

    from pallas_puzzles.backends import Backend
    from pallas_puzzles.course.model import Puzzle
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult


@dataclass(frozen=True)
class ProcessSetup:
    """What must hold in a checker process before JAX is imported (it cannot change afterwards)."""

    host_devices: int = 1  # simulated CPU devices (--xla_force_host_platform_device_count)
    block_imports: tuple[str, ...] = ()  # modules made to fail fast on import, where kernels are interpreted
    xla_flags: tuple[str, ...] = ()  # more XLA flags (the checker's own are always added)
    # Its checks are the same in a process with more simulated devices than it asks for (its kernels run
    # on the first, or on a mesh of the size a case names), so a target that needs more may share it.
    # Off by default: a course's own target may count the devices it finds.
    more_devices_alike: bool = False
    # The JAX modules its checks import, costly to import: the zygote imports them before it forks
    # the checkers (worker/zygote.py), so they share them and a restarted checker has them at once.
    preload: tuple[str, ...] = ()

    def all_xla_flags(self) -> tuple[str, ...]:
        devices = (f"--xla_force_host_platform_device_count={self.host_devices}",) if self.host_devices > 1 else ()
        return (*devices, *self.xla_flags)

    def can_share(self, other: ProcessSetup) -> bool:
        """Can one process serve both? Where their own XLA flags agree (another flag would change what the
        other runs) and their device counts do, or the one asking for fewer runs alike on more. Imports are
        blocked per target, as it starts (engine/targets/process.py)."""
        if self.xla_flags != other.xla_flags:
            return False
        fewer = min((self, other), key=lambda setup: setup.host_devices)
        return self.host_devices == other.host_devices or fewer.more_devices_alike

    def with_devices_of(self, other: ProcessSetup) -> ProcessSetup:
        """This setup with enough simulated devices for `other` too."""
        return dataclasses.replace(self, host_devices=max(self.host_devices, other.host_devices))


class Target:
    """A way of running kernels. Subclasses set the class attributes and implement `run_case`."""

    name: ClassVar[str]  # the registry key, written in course files (`target = ...`)
    summary: ClassVar[str]  # one line for doctor, list and the README
    setup: ClassVar[ProcessSetup] = ProcessSetup()
    cost_card: ClassVar[bool] = False  # the TPU-pipeline performance card applies to its passing cases
    gpu_card: ClassVar[bool] = False  # its passing cases carry the GPU card (perf/gpu_card.py; --chip h100...)
    min_jax: ClassVar[str] = ""  # the oldest jax it runs on ("": any this project supports)
    # Its shape cases each take a tenth of a second or more: in watch mode two checkers share a check
    # (worker/split.py).
    shares_cases: ClassVar[bool] = False
    # Each case lowers the kernel for a GPU, apart from running it, and run_case honours Case.lowering: a
    # shared check may then give the lowering of a case to the other checker (worker/split.py).
    lowers_apart: ClassVar[bool] = False
    # Where a chapter of this target runs on other backends and modes: a backend name, or "lower"
    # for the lowering check, -> the name of the target that runs it there. A backend missing here
    # is one the target cannot run on.
    partners: ClassVar[Mapping[str, str]] = {}
    # Why `lower` cannot check this target's kernels, where it has no "lower" partner (a clause).
    not_lowered_because: ClassVar[str] = "its target has no lowering check"
    # Why it cannot run on a backend missing from `partners`, where that is more than an idiom of the
    # puzzle (a backend name -> a clause; `refusal` says the general sentence for the rest).
    not_run_because: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> list[str]:
        """What is wrong with a puzzle's `target_options` for this target (read without JAX)."""
        return [f"unknown option {key!r}" for key in options]

    # -- in the checker process, after JAX is imported ----------------------------------------

    def start(self) -> None:
        """Install hooks and configure JAX; called once per process, before any check."""

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        """Run one shape case of the learner's entry point and judge it."""
        raise NotImplementedError

    def after_cases(self, puzzle: Puzzle, entry: Callable[..., Any], learner_file: Path,
                    backend: Backend) -> CaseResult | None:
        """Once every shape case has passed: a last check that runs no kernel (a failed case, or None)."""
        return None

    def reset(self) -> None:
        """After a case failed: leave nothing behind that could disturb the next check."""

    def between_puzzles(self) -> None:
        """The process moves on to another puzzle: drop what only the last one could reuse."""
