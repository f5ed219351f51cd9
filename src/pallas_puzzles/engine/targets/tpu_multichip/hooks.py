"""Hooks into Pallas's TPU interpreter for kernels that run over several devices.

They report each remote copy, signal, wait, store and kernel edge to the
MONITOR, and act only while it is active, so single-device kernels in the same
process run as before; callbacks.py runs the interpreter's callbacks in turns.
The private names used here and in watch.py (the TPU interpreter's dma_start,
dma_wait, semaphore_signal, semaphore_wait, get_barrier_semaphore, interpret_pallas_call, _barrier,
_validate, _clear_shared_memory, _check_for_revisiting, DMA, DmaState,
fail_on_exception, _shared_memory; utils' _device_id_to_logical; SharedMemory's
get_random_virtual_device_id; JAX's runtime effect tokens) are listed, with
the versions checked, in tpu_multichip/jax_private.py, which hands them out.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.tpu_multichip import callbacks, jax_private, overlap, watch
from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR, KernelLog
from pallas_puzzles.engine.targets.tpu_multichip.problems import (
    AutoBarrier,
    BadDevice,
    BadDeviceId,
    CopyInfo,
    RunStopped,
)

_installed = False


def _live(ipc: Any) -> tuple[Any, KernelLog] | None:
    """(the interpreter's shared memory, this kernel's log) while a multi-device run is active."""
    memory = ipc._shared_memory
    if not MONITOR.active or memory is None:
        return None
    return memory, MONITOR.kernel(memory, int(memory.num_devices))


def _check_target(memory: Any, device: int, target: int, what: str, where: Any) -> None:
    if not 0 <= target < int(memory.num_devices):
        log = MONITOR.kernel(memory, int(memory.num_devices))
        MONITOR.add(BadDevice(device, target, int(memory.num_devices), what, where, len(log.steps[device])))
        raise RunStopped(f"device {device} addresses device {target}")


class _waiting:
    """Registers the calling thread as waiting on a semaphore, for the deadlock watchdog."""

    def __init__(self, device: int, sem_id: int, wanted: int, where: Any, kind: str) -> None:
        self.entry = (device, sem_id, wanted, where, kind)

    def __enter__(self) -> None:
        with MONITOR.lock:
            MONITOR.waits[threading.get_ident()] = self.entry

    def __exit__(self, *exc: object) -> None:
        with MONITOR.lock:
            MONITOR.waits.pop(threading.get_ident(), None)


def _hook_copies(ipc: Any) -> None:
    dma_start, dma_wait = ipc.dma_start, ipc.dma_wait

    def start(*args: Any, source_info: Any = None, **kwargs: Any) -> Any:
        live = _live(ipc)
        if live is not None:  # args: token, device, core, src space, src, transforms, dst space, dst, ..., dst device
            memory, log = live
            device = int(args[1])
            target = device if args[11] is None else int(args[11])
            _check_target(memory, device, target, "copy", source_info)
            if target != device:
                MONITOR.remote(log, device, target, "copy", source_info)
                MONITOR.event(log, device, "send", source_info)
        return dma_start.__wrapped__(*args, source_info=source_info, **kwargs)

    def wait(token: Any, device_id: Any, core: Any, sem_id: Any, size: Any, source_info: Any = None) -> Any:
        live = _live(ipc)
        if live is not None:
            with _waiting(int(device_id), int(sem_id), int(size), source_info, "dma"):
                out = dma_wait(token, device_id, core, sem_id, size, source_info=source_info)
            MONITOR.dma_waited(int(device_id), int(sem_id), int(size), source_info)
            MONITOR.event(live[1], int(device_id), "wait", source_info)
            return out
        return dma_wait(token, device_id, core, sem_id, size, source_info=source_info)

    # Raising inside fail_on_exception lets the interpreter stop every device cleanly.
    ipc.dma_start = functools.update_wrapper(ipc.fail_on_exception(start), dma_start)
    ipc.dma_wait = functools.update_wrapper(wait, dma_wait)

    class TrackedDMA(ipc.DMA):  # type: ignore[misc,name-defined]
        """A copy that tells the monitor where it came from, and how many bytes it moved once it has
        read them (the interpreter assigns `data` once, under the copy's own lock)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if MONITOR.active:
                MONITOR.copy_made(self.id, CopyInfo(int(self.src_device_id), int(self.dst_device_id), self.source_info,
                                                    getattr(self.src_sem, "id", None), int(self.dst_sem.id)))

        @property
        def data(self) -> Any:
            return self.__dict__.get("_data")

        @data.setter
        def data(self, value: Any) -> None:
            self.__dict__["_data"] = value
            if value is not None and MONITOR.active:
                MONITOR.copy_read(self.id, int(value.nbytes))

    ipc.DMA = TrackedDMA


def _hook_semaphores(ipc: Any) -> Callable[..., Any]:
    signal, sem_wait = ipc.semaphore_signal, ipc.semaphore_wait

    def signal_hook(token: Any, device_id: Any, core: Any, sem_id: Any, inc: Any, target: Any,
                    target_core: Any, source_info: Any = None) -> Any:
        live = _live(ipc)
        if live is not None:
            memory, log = live
            device = int(device_id)
            to = device if target is None else int(target)
            _check_target(memory, device, to, "signal", source_info)
            if int(sem_id) in memory.fixed_id_sem:
                MONITOR.barrier_signal(log, device, to)
            else:
                MONITOR.remote(log, device, to, "signal", source_info)
            MONITOR.signalled(device, to, int(sem_id), source_info)
        return signal.__wrapped__(token, device_id, core, sem_id, inc, target, target_core, source_info=source_info)

    def wait_hook(token: Any, device_id: Any, core: Any, sem_id: Any, value: Any, source_info: Any = None) -> Any:
        live = _live(ipc)
        if live is None:  # another target's kernel: its wait keeps the line it was given
            return sem_wait(token, device_id, core, sem_id, value, source_info=source_info)
        memory, log = live
        barrier = int(sem_id) in memory.fixed_id_sem
        with _waiting(int(device_id), int(sem_id), int(value), source_info, "barrier" if barrier else "regular"):
            out = sem_wait(token, device_id, core, sem_id, value, source_info=source_info)
        if barrier:
            MONITOR.barrier_waited(log, int(device_id))
        else:
            MONITOR.waited(int(device_id), int(sem_id), source_info)
        return out

    ipc.semaphore_signal = functools.update_wrapper(ipc.fail_on_exception(signal_hook), signal)
    ipc.semaphore_wait = functools.update_wrapper(wait_hook, sem_wait)
    return wait_hook


def _describe(device_id: Any) -> str:
    """A device_id as the learner wrote it, without the tracers inside."""
    if isinstance(device_id, dict):
        return "{" + ", ".join(f"{key!r}: ..." for key in device_id) + "}"
    if isinstance(device_id, (tuple, list)):
        return f"a tuple of {len(device_id)} coordinate{'s' if len(device_id) != 1 else ''}"
    return "a single number"


def _hook_device_ids(iutils: Any) -> None:
    to_logical = iutils._device_id_to_logical

    @functools.wraps(to_logical)
    def checked(device_id: Any, device_id_type: Any, axis_sizes: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return to_logical(device_id, device_id_type, axis_sizes, *args, **kwargs)
        except (AssertionError, ValueError, NotImplementedError, TypeError, KeyError) as exc:
            if not MONITOR.active:
                raise
            from jax.extend import source_info_util

            MONITOR.add(BadDeviceId(_describe(device_id), tuple(str(a) for a in axis_sizes),
                                    f"{type(exc).__name__}: {exc}", source_info_util.current()))
            raise RunStopped("device_id does not fit the mesh") from exc

    iutils._device_id_to_logical = checked


def _hook_kernel_edges(ipc: Any) -> None:
    barrier, validate, clear, revisit, interpret = (ipc._barrier, ipc._validate, ipc._clear_shared_memory,
                                                    ipc._check_for_revisiting, ipc.interpret_pallas_call)

    def barrier_hook(token: Any, device_id: Any) -> Any:  # only kernels without a collective_id call it
        live = _live(ipc)
        if live is not None:
            MONITOR.everyone_entered(live[1])
            MONITOR.add(AutoBarrier())
        return barrier(token, device_id)

    def validate_hook(token: Any, device_id: Any) -> Any:
        # The interpreter's own exit check only prints; the exit rule runs once every device is done.
        return token if _live(ipc) is not None else validate(token, device_id)

    def clear_hook() -> Any:  # the clean-up barrier's action: every device has left the kernel
        live = _live(ipc)
        if live is not None and live[0]._failure is None:
            try:
                watch.exit_rule(ipc, live[0])
            except Exception as exc:  # never break the interpreter's clean-up barrier
                MONITOR.add(exc)
        return clear()

    def revisit_hook(token: Any, device_id: Any, core: Any, loop_idx: Any, *rest: Any) -> Any:
        live = _live(ipc)
        if live is not None:  # called once per grid step of each device: the order each device ran
            live[1].steps[int(device_id)].append(tuple(int(i) for i in loop_idx))
        return revisit(token, device_id, core, loop_idx, *rest)

    def interpret_hook(*args: Any, jaxpr: Any, grid_mapping: Any, **kwargs: Any) -> Any:
        if MONITOR.active:  # the kernel is being traced: which of its copies fly while nothing is computed
            first = grid_mapping.num_index_operands + grid_mapping.num_inputs
            MONITOR.idle.update(overlap.idle_copies(jaxpr, jaxpr.invars[first:first + grid_mapping.num_outputs]))
        return interpret(*args, jaxpr=jaxpr, grid_mapping=grid_mapping, **kwargs)

    ipc._barrier = functools.update_wrapper(barrier_hook, barrier)
    ipc._validate = functools.update_wrapper(validate_hook, validate)
    ipc._clear_shared_memory = functools.update_wrapper(clear_hook, clear)
    ipc._check_for_revisiting = functools.update_wrapper(revisit_hook, revisit)
    ipc.interpret_pallas_call = functools.update_wrapper(interpret_hook, interpret)


def install() -> None:
    """Install every hook once per process (idempotent)."""
    global _installed
    if _installed:
        return
    from pallas_puzzles.engine.targets.pallas_call.intercept import (
        descriptors,
        dma_watch,
        landing_order,
        semaphore_bounds,
        semaphore_clocks,
    )

    ipc, race_detection_state, shared_memory, iutils = (jax_private.interpreter(), jax_private.race_detection_state(),
                                                        jax_private.shared_memory(), jax_private.interpret_utils())

    _hook_copies(ipc)
    sem_wait = _hook_semaphores(ipc)
    callbacks.install(ipc, shared_memory, sem_wait)
    _hook_device_ids(iutils)
    _hook_kernel_edges(ipc)
    watch.hook_races(race_detection_state)
    semaphore_bounds.install()
    landing_order.install(shared_memory)  # the second run's waits (turns.schedules)
    semaphore_clocks.install()
    descriptors.keep()
    # Each copy its own coordinate in the race detector's clocks (see dma_watch), so no race is missed by chance.
    shared_memory.SharedMemory.get_random_virtual_device_id = dma_watch._next_virtual_core
    threading.Thread(target=watch.watchdog, args=(ipc,), daemon=True, name="multichip-watchdog").start()
    _installed = True


def recover() -> None:
    """After a failed kernel: forget the interpreter's state and JAX's failed effect tokens, so the next
    kernel, of any puzzle, runs clean. jax 0.12 forgets the tokens in effects_barrier; jax 0.10 re-raises
    there and keeps them, so runtime_tokens is cleared as well."""
    import jax
    from jax.experimental.pallas import tpu as pltpu

    try:
        jax.effects_barrier()
    except Exception:
        pass
    jax_private.runtime_tokens().clear()
    pltpu.reset_tpu_interpret_mode_state()
