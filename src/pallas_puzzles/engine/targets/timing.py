"""A kernel's time on a real accelerator, for `perf`: the median wall time of one compiled call.

The launcher is compiled once with `jax.jit` (that call is not timed), then called `runs` times,
each call waited for. What is measured is the whole call as a program sees it: the kernels, the
launcher's other operations and the dispatch, on inputs already on the device. A launcher `jax.jit`
cannot trace gets no time, never a verdict: timing runs only after a case has passed.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult

RUNS = 10  # perf's timed calls per shape case, after one untimed call that compiles


def median_call_seconds(entry: Callable[..., Any], inputs: Sequence[Any], device: Any, runs: int) -> float | None:
    """The median seconds of `runs` calls of `entry` compiled for `device`; None when it cannot be timed."""
    import jax

    if runs <= 0:
        return None
    try:
        args = [jax.device_put(a, device) for a in inputs]
        call = jax.jit(entry)
        with jax.default_device(device):
            jax.block_until_ready(call(*args))
            seconds = []
            for _ in range(runs):
                start = time.perf_counter()
                jax.block_until_ready(call(*args))
                seconds.append(time.perf_counter() - start)
    except Exception:  # not traceable under jit, or the device refused the compiled launcher: no time
        return None
    return statistics.median(seconds)


def timed(case: Case, entry: Callable[..., Any], result: CaseResult) -> CaseResult:
    """`result` with its measured time, when it passed on an accelerator and the check asked for one."""
    if not result.passed or case.timed_runs <= 0 or case.backend.interprets:
        return result
    import jax

    device = jax.devices(case.backend.platform)[0]
    seconds = median_call_seconds(entry, case.data()[0], device, case.timed_runs)
    return dataclasses.replace(result, measured_seconds=seconds)
