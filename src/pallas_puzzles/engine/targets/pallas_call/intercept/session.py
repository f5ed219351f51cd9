"""One shape case's strict-check settings and records, and the slot that makes it active."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pallas_puzzles.backends import Backend
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
    from pallas_puzzles.source_line import SourceLine


# Room in the race detector's clocks for the cores and the copies in flight (see dma_watch).
VECTOR_CLOCK_SIZE = 64


class StrictViolation(Exception):
    """A fault found before or while a kernel runs, already explained."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


@dataclass
class StrictSession:
    """Settings and records for one shape case of one check."""

    backend: Backend
    learner_file: str
    allow_revisits: bool = False
    cores: int = 1  # simulated TensorCores
    detect_races: bool = False
    # What uninitialised memory and block padding read as (see poison.py): NaN, finite garbage
    # of either sign, or stale data of ordinary size, as on hardware. Changed per shape case.
    poison: float = math.nan
    # Seeds the interpreter's shuffle of "parallel" grid axes: each case runs them in another order,
    # never the written one (grid_order.py); reverse_parallel runs them all backwards instead.
    seed: int = 0
    reverse_parallel: bool = False
    # The value written into output blocks before their first visit (stale data, or a probe's
    # small fill); None: sentinel.sentinel_for, which marks elements never written.
    sentinel: float | None = None
    # What float scratch (VMEM and SMEM buffers) holds at first, when it should differ from `poison`
    # while padding keeps it (a probe telling a carry read too early from padding read; poison.py).
    scratch_fill: float | None = None
    # Run every "parallel" axis as "arbitrary" (in order): a probe for order-dependent kernels.
    sequential: bool = False
    # The kernel runs on several devices at once (the tpu-multichip target): a device may wait long for
    # another, so only that target's watchdog, which sees every device, may call a wait stuck.
    multi_device: bool = False
    # When a manual copy lands: "eager" (at its start) or "on_wait" (only when a wait needs its bytes).
    # Hardware may do either, so cases alternate (landing_order.mode_for_case).
    dma_mode: str = "eager"
    # With "on_wait": a wait lands the oldest of the copies pending on its semaphore first (else the newest).
    dma_oldest_first: bool = False
    # Refuse block shapes that Mosaic would not compile (puzzles whose only hardware is a TPU).
    tpu_block_rules: bool = False
    # False: record each pallas_call and check its index maps, but run no kernel (its outputs are
    # zeros); what the launcher does around the calls still runs.
    run_kernels: bool = True
    # With run_kernels False, under jax.make_jaxpr: each pallas_call becomes a jax.pure_callback on its
    # operands, so the launcher's jaxpr shows what flows into and out of it (launcher_traffic.py).
    stand_ins: bool = False
    # Extra InterpretParams options (e.g. num_cores_or_threads, detect_races), used where jax has them.
    interpret_options: dict[str, Any] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)
    grid_points: list[tuple[int, ...]] = field(default_factory=list)
    callback_errors: list[BaseException] = field(default_factory=list)
    # Faults found when a kernel exits normally: copies nobody waited for (dma_ledger).
    unbalanced: list[Finding] = field(default_factory=list)
    # The copy descriptors the kernel made (make_async_copy) and their lines: one never started moves nothing.
    descriptors: list[tuple[Any, SourceLine | None]] = field(default_factory=list)

    def output_for(self, shape: tuple[int, ...]) -> tuple[CallRecord, BlockInfo, int] | None:
        """The last recorded call's output that produced a result of `shape`, and the number of leading
        (jax.vmap batch) dimensions the call itself does not see; None when no output matches."""
        for record in reversed(self.calls):
            for info in record.outputs:
                lead = len(shape) - len(info.array_shape)
                if lead >= 0 and tuple(shape[lead:]) == info.array_shape:
                    return record, info, lead
        return None

    def record_grid_point(self, token: Any, grid_point: Any, core: Any) -> Any:
        self.grid_points.append(tuple(int(v) for v in np.asarray(grid_point).ravel()))
        return token

    def interpret_params(self) -> Any:
        """The strict interpreter settings; options the installed jax lacks are left out."""
        import dataclasses

        from jax.experimental.pallas import tpu as pltpu

        options: dict[str, Any] = {
            "out_of_bounds_reads": "raise",
            "uninitialized_memory": "nan",  # poison.py turns this into self.poison
            "grid_point_recorder": self.record_grid_point,
            "random_seed": self.seed,
            "num_cores_or_threads": self.cores,
            "detect_races": self.detect_races,
            "dma_execution_mode": self.dma_mode,
            "vector_clock_size": VECTOR_CLOCK_SIZE if self.detect_races else None,
            **self.interpret_options,
        }
        known = {f.name for f in dataclasses.fields(pltpu.InterpretParams)}
        return pltpu.InterpretParams(**{k: v for k, v in options.items() if k in known})


class _ActiveSession:
    """The session being checked, process-wide.

    Not a contextvar: the interpreter's callbacks (and so JAX's error log)
    run on XLA's own threads, which do not see the checking thread's context.
    A worker checks one case at a time, so one slot is enough.
    """

    def __init__(self) -> None:
        self.session: StrictSession | None = None


active = _ActiveSession()


class _CallbackErrorCatcher(logging.Handler):
    """JAX logs the original exception of a failed io_callback; keep it."""

    def emit(self, record: logging.LogRecord) -> None:
        session = active.session
        if session is not None and record.exc_info and record.exc_info[1] is not None:
            session.callback_errors.append(record.exc_info[1])


class session_scope:
    """Context manager that activates a session and silences JAX's callback log."""

    def __init__(self, session: StrictSession) -> None:
        self.session = session
        self._handler = _CallbackErrorCatcher()
        self._logger = jax_private.callback_logger()

    def __enter__(self) -> StrictSession:
        self._previous = active.session
        active.session = self.session
        self._saved = (self._logger.propagate, self._logger.level)
        self._logger.addHandler(self._handler)
        self._logger.propagate = False
        self._logger.setLevel(logging.ERROR)
        return self.session

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self._handler)
        self._logger.propagate, level = self._saved
        self._logger.setLevel(level)
        active.session = self._previous
