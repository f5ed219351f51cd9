"""Running a failed shape case again with one setting changed, to find what caused the failure.

explain/cause.py decides which reruns can tell causes apart (another padding
value, a pre-filled output, parallel axes in order); this runs one of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
from typing import Any

import numpy as np

from pallas_puzzles.engine import specs
from pallas_puzzles.engine.intercept import patch
from pallas_puzzles.engine.intercept.session import StrictSession, session_scope


def rerun(session: StrictSession, entry: Any, inputs: tuple[np.ndarray, ...], **changes: Any) -> np.ndarray | None:
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
    return np.asarray(got)
