"""The copy descriptors a kernel makes (make_async_copy, make_async_remote_copy), kept with their lines.

A descriptor only describes a copy: nothing moves until `.start()`. A kernel that makes one and never
starts it leaves the output it should have written unwritten, and JAX says so only in a log line when
the descriptor is collected, after the check, in the learner's terminal. Kept in the session instead,
explain/copies.idle_copy names its line in the verdict (TPU and multi-device targets alike), and that
log line is left out. Nothing here changes what a kernel computes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.learner_lines import learner_call_site
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

_UNUSED_LOG = "AsyncCopyDescriptor was not used"  # the start of JAX's message (jax 0.10.2 and 0.12.0.1)
_installed = False


def _kept(make: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(make)
    def describe(*args: Any, **kwargs: Any) -> Any:
        made = make(*args, **kwargs)
        session = active.session
        if session is not None:
            session.descriptors.append((made, learner_call_site(session.learner_file)))
        return made

    return describe


def _not_the_unused_copy_log(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(_UNUSED_LOG)


def keep() -> None:
    """Wrap pltpu's descriptor makers and filter JAX's log (once per process)."""
    global _installed
    if _installed:
        return
    from jax.experimental.pallas import tpu as pltpu

    for name in ("make_async_copy", "make_async_remote_copy"):
        setattr(pltpu, name, _kept(getattr(pltpu, name)))
    logging.getLogger().addFilter(_not_the_unused_copy_log)
    _installed = True
