"""Setting a process up to check with a target: what must hold before JAX starts, then JAX itself.

The checker process does this once, first thing; the notebook API does it in the
notebook's own process on the first check. A host device count can only be set
before JAX initialises its backends, so a notebook whose JAX already runs with
fewer devices is told so in one sentence.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from pallas_puzzles import backends, environment
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.engine.targets import for_check, get, shared_setup
from pallas_puzzles.engine.targets.base import Target
from pallas_puzzles.errors import UserError

_blocked: set[str] = set()  # modules this process made unimportable, for a target that does not need them


@dataclass(frozen=True)
class Started:
    backend: Backend
    target: Target
    warning: str | None  # about the installed jax, if any


def _block(modules: tuple[str, ...]) -> None:
    """Make `modules` fail fast on import, and undo what an earlier target blocked but this one needs."""
    for module in _blocked - set(modules):
        if sys.modules.get(module, 0) is None:
            del sys.modules[module]
        _blocked.discard(module)
    for module in modules:
        if module not in sys.modules:
            sys.modules[module] = None  # type: ignore[assignment]
            _blocked.add(module)


def start(declared: str, requested: str, mode: Mode, serves: tuple[str, ...] = ()) -> Started:
    """Prepare this process for checks of chapters whose target is `declared`, and start JAX (once: a
    later call switches the process to another target). `serves`: every target the process will check
    for (process_groups' group): JAX starts with a setup that suits them all.

    A jax this project cannot use, or a backend that is not here, is a UserError.
    """
    setup = get(declared).setup
    backends.prepare_environment(requested, mode)
    whole = shared_setup((declared, *serves))
    os.environ[environment.XLA_FLAGS.name] = backends.with_flags(environment.XLA_FLAGS.value(), whole.all_xla_flags())
    import jax

    error, warning = backends.jax_version_verdict(jax.__version__)
    if error:
        raise UserError(error)
    backends.configure_jax()
    backend = backends.resolve(requested, mode)
    if setup.host_devices > 1 and len(jax.devices("cpu")) < setup.host_devices:
        raise UserError(f"The {declared} target needs {setup.host_devices} simulated CPU devices, and JAX in this "
                        f"process already started with {len(jax.devices('cpu'))}; run it in a fresh process "
                        f"(restart the notebook's kernel and check this puzzle first).")
    _block(setup.block_imports if backend.interprets else ())
    target = for_check(declared, backend, mode)
    target.start()
    return Started(backend, target, warning)


def rejoin(declared: str, started: Started) -> None:
    """Switch back to a target this process started before: its hooks are installed, and only its
    blocked imports need redoing (another target's start may have undone them)."""
    _block(get(declared).setup.block_imports if started.backend.interprets else ())
