"""How the TPU interpreter's callbacks run in a multi-device check: in turns, and as cheaply as they can.

Every load, store, copy, signal and wait of an interpreted kernel is a callback the
interpreter traces into the device's program (`callback.io_callback`, through its
module reference, which `CallbackModule` stands in for). Here:
- each runs by the scheduler's rules (turns.py), and a semaphore's condition variable hands the
  turn on instead of sleeping with it; a failure opens every gate;
- the interpreter's own callbacks take their arguments as numpy arrays (numpy_callbacks.py; over
  half of an eight-device run's time went to placing them on a device);
- a semaphore wait gets the learner's line, and a barrier semaphore asked for without a
  collective_id is refused at the learner's line.

Private names (tpu_multichip/jax_private.py lists them): the interpreter's module reference
`callback`, JAX's io_callback_impl, Semaphore.__init__ and SharedMemory.set_failed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets import numpy_callbacks
from pallas_puzzles.engine.targets.tpu_multichip import jax_private, turns
from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
from pallas_puzzles.engine.targets.tpu_multichip.problems import NoCollectiveId, RunStopped


class CallbackModule:
    """Stands in for JAX's callback module inside the interpreter, to see the callbacks as the kernel is
    traced: each runs by the scheduler's rules (turns.py), a semaphore wait gets the learner's line (the
    interpreter passes it none), and a barrier semaphore asked for in a kernel without a collective_id
    is refused at the learner's line."""

    def __init__(self, real: Any, ipc: Any, sem_wait: Callable[..., Any]) -> None:
        self._real, self._ipc, self._sem_wait = real, ipc, sem_wait

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def io_callback(self, callback: Any, *args: Any, **kwargs: Any) -> Any:
        from jax.extend import source_info_util

        if callback is self._sem_wait:
            callback = functools.partial(callback, source_info=source_info_util.current())
        elif callback is self._ipc.get_barrier_semaphore and MONITOR.active and args and args[-1] is None:
            MONITOR.add(NoCollectiveId(source_info_util.current()))
            raise RunStopped("get_barrier_semaphore without a collective_id")
        return self._real.io_callback(turns.gate(callback), *args, **kwargs)



def _schedule(shared_memory: Any) -> None:
    """The scheduler's two hooks into the interpreter's memory: a scheduled device that must wait on a
    semaphore hands its turn on (turns.GatedCondition), and a failure lets every device go, to reach
    the interpreter's own check (the failing device waits for the others at the kernel's exit)."""
    init, set_failed = shared_memory.Semaphore.__init__, shared_memory.SharedMemory.set_failed

    @functools.wraps(init)
    def gated(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.cv = turns.GatedCondition(lambda: (self.count_by_core.tobytes(), tuple(map(len, self.tasks))))

    @functools.wraps(set_failed)
    def failed(self: Any, exception: Any, *args: Any, **kwargs: Any) -> Any:
        turns.TURNS.open()
        MONITOR.failed(exception)
        return set_failed(self, exception, *args, **kwargs)

    shared_memory.Semaphore.__init__ = gated
    shared_memory.SharedMemory.set_failed = failed


def install(ipc: Any, shared_memory: Any, sem_wait: Callable[..., Any]) -> None:
    """Route the interpreter's callbacks through here (hooks.install calls this once per process)."""
    ipc.callback = CallbackModule(ipc.callback, ipc, sem_wait)
    _schedule(shared_memory)
    numpy_callbacks.install(jax_private.jax_callbacks(), jax_private.callback_logger())
