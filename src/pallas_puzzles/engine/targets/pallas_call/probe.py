"""Running a failed shape case again with one setting changed, to find what caused the failure.

explain/cause.py decides which reruns can tell causes apart (another padding
value, a pre-filled output, parallel axes in order); this runs one of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
from typing import Any, NamedTuple

import numpy as np

from pallas_puzzles.engine import specs
from pallas_puzzles.engine.targets.pallas_call.intercept import patch
from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope

PROBE_FILL = 3.0  # output pre-fill in a probe run: an accumulating store visibly changes it


def probe_poison(poison: float) -> float:
    """Padding in a probe run: zeros after NaN (finite and harmless to exp, so NaN that stays
    is arithmetic), else garbage of the other sign (zeros can agree with garbage by chance)."""
    return 0.0 if math.isnan(poison) else -poison


class Rerun(NamedTuple):
    output: np.ndarray  # what the launcher returned
    calls: list[CallRecord]  # the pallas_calls it made, with their own outputs (CallRecord.results)


def rerun(session: StrictSession, entry: Any, inputs: tuple[np.ndarray, ...], **changes: Any) -> Rerun | None:
    """The launcher's output with the session's settings changed; None where a rerun cannot tell."""
    import jax

    if not session.backend.interprets:
        return None
    changed = dataclasses.replace(session, calls=[], grid_points=[], callback_errors=[], unbalanced=[], **changes)
    try:
        with session_scope(changed), jax.default_device(jax.devices("cpu")[0]), \
                contextlib.redirect_stdout(io.StringIO()):
            got = jax.block_until_ready(entry(*specs.on_device(inputs)))
    except Exception:  # the changed run failed outright: it tells nothing about the cause
        patch.reset_interpreter()
        return None
    got = got[0] if isinstance(got, (tuple, list)) and len(got) == 1 else got
    return Rerun(np.asarray(got), changed.calls)
