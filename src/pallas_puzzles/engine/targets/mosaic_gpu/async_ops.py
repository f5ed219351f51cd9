"""The asynchronous units the interpreter runs as if they were not: wgmma and TMA store groups.

JAX's GPU interpreter (jax 0.12.0.1) multiplies at once when a wgmma is issued, tells its race
detector nothing of it ("TODO: Vector clocks" in gpu_callbacks.wgmma), and runs no callback at all
for wgmma_wait or commit_smem_to_gmem_group (`out = []  # TODO` in JaxprInterpreter.interpret); it
treats every TMA store as committed to a group. On a GPU a wgmma reads its shared-memory operands
until a wgmma_wait lets it go, and a store issued with commit_group=False belongs to no group that
wait_smem_to_gmem waits for. Here, as there:

- each wgmma's reads of its SMEM operands reach the race detector as reads of the async proxy
  (a warpgroup's stores are seen only once committed, as by a TMA store), on a pseudo-thread of
  their own: until the wgmma is waited for, nothing its warpgroup does is ordered after them, so a
  TMA copy still filling an operand, and a store or a refill while it still reads one, are races;
- wgmma_wait(n), and reading an accumulator (which waits for all but `wait_n`), order the warpgroup
  after every wgmma but the n most recent; a warpgroup that ends with one still running is refused;
- a TMA store issued with commit_group=False is held out of the interpreter's waits until
  commit_smem_to_gmem_group; one never committed is refused at the warpgroup's end.

The interpreter is handed the eqns of wgmma_wait_p and commit_group_p as eqns of
wait_smem_to_gmem_p with a negative n, which no kernel can write (its n must be >= 0), and the
wrapper of that callback takes them back (_marked). Private API (mosaic_gpu/jax_private.py lists it):
JaxprInterpreter.interpret, those primitives, the gpu_callbacks wgmma, wgmma_accumulator_deref,
copy_smem_to_gmem and wait_smem_to_gmem, and GPUSharedMemory's clocks, lock, incr_clock,
get_next_tma_thread_id, pending_smem_to_gmem_*_clocks, get_buffer_content and kernel_thread_finished.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import current_op, line_of, memory_name, wrap
from pallas_puzzles.engine.targets.mosaic_gpu.record import StoreNotWaited, WgmmaRunning, active

COMMIT_GROUP = -1  # a marked wait_smem_to_gmem: commit_smem_to_gmem_group()
WGMMA_WAIT = -2  # WGMMA_WAIT - n: wgmma_wait(n)

_tls = threading.local()  # .reading: the clock of the wgmma whose operands are being read


def _state(memory: Any, name: str, thread: Any) -> collections.deque[Any]:
    """Per-run bookkeeping kept on the interpreter's shared memory (a fresh one each run)."""
    return memory.__dict__.setdefault(name, collections.defaultdict(collections.deque))[thread]


# --- the interpreter is handed the waits it skips ----------------------------------------------

def _marked_eqns(jaxpr: Any) -> Any:
    primitives = jax_private.gpu_primitives()
    wait_p, store_wait_p = primitives.wgmma_wait_p, primitives.wait_smem_to_gmem_p
    if not any(e.primitive is wait_p or e.primitive is primitives.commit_group_p for e in jaxpr.eqns):
        return jaxpr
    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is wait_p:
            eqn = eqn.replace(primitive=store_wait_p, params={"n": WGMMA_WAIT - eqn.params["n"],
                                                              "wait_read_only": False})
        elif eqn.primitive is primitives.commit_group_p:
            eqn = eqn.replace(primitive=store_wait_p, params={"n": COMMIT_GROUP, "wait_read_only": False})
        eqns.append(eqn)
    return jaxpr.replace(eqns=eqns)


def _interpret(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def interpret(self: Any, jaxpr: Any, token: Any, *args: Any) -> Any:
        return original(self, _marked_eqns(jaxpr), token, *args)

    return interpret


def _marked(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wait_smem_to_gmem(*, token: Any, thread: Any, n: Any, **kwargs: Any) -> Any:
        n = int(np.asarray(n))
        if n == COMMIT_GROUP:
            _commit_stores(jax_private.shared_memory_now(), thread)
        elif n <= WGMMA_WAIT:
            _wgmma_wait(jax_private.shared_memory_now(), thread, WGMMA_WAIT - n)
        else:
            return original(token=token, thread=thread, n=n, **kwargs)
        return token

    return wait_smem_to_gmem


# --- wgmma -----------------------------------------------------------------------------------

def _wgmma(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wgmma(*, thread: Any, **kwargs: Any) -> Any:
        memory = jax_private.shared_memory_now()
        if active.record is None or not memory.detect_races:
            return original(thread=thread, **kwargs)
        clock = memory.incr_clock(thread)
        clock.inc(memory.get_next_tma_thread_id())  # the tensor cores: a pseudo-thread of its own
        _tls.reading = clock
        try:
            out = original(thread=thread, **kwargs)
        finally:
            _tls.reading = None
        _state(memory, "_pp_wgmma", thread).append((clock, line_of(current_op()[1])))
        return out

    return wgmma


def _operand_reads(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def get_buffer_content(self: Any, key: Any, access: Any, thread: Any, *args: Any, **kwargs: Any) -> Any:
        clock = getattr(_tls, "reading", None)
        if clock is not None and memory_name(key) == "SMEM":
            jax_private.gpu_callbacks().get_races().check_read(
                thread, clock.async_smem_clock.copy(), key, access, source_info=current_op()[1])
        return original(self, key, access, thread, *args, **kwargs)

    return get_buffer_content


def _wgmma_wait(memory: Any, thread: Any, n: int) -> None:
    """All but the n most recent wgmma of the warpgroup are done: it is ordered after their reads."""
    pending = _state(memory, "_pp_wgmma", thread)
    with memory.lock:
        while len(pending) > n:
            memory.clocks[thread].update(pending.popleft()[0])


def _accumulator_read(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wgmma_accumulator_deref(*, thread: Any, wait_n: Any, **kwargs: Any) -> Any:
        if wait_n is not None and active.record is not None:
            _wgmma_wait(jax_private.shared_memory_now(), thread, int(np.asarray(wait_n)))
        return original(thread=thread, wait_n=wait_n, **kwargs)

    return wgmma_accumulator_deref


# --- TMA store groups ------------------------------------------------------------------------

def _store(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def copy_smem_to_gmem(*, thread: Any, commit_group: Any = True, **kwargs: Any) -> Any:
        out = original(thread=thread, commit_group=commit_group, **kwargs)
        memory = jax_private.shared_memory_now()
        if active.record is not None and memory.detect_races and not bool(np.asarray(commit_group)):
            reads, writes = (memory.pending_smem_to_gmem_read_clocks[thread],
                             memory.pending_smem_to_gmem_write_clocks[thread])
            with memory.lock:  # in no group yet: no wait_smem_to_gmem may count it
                held = (reads.pop(), writes.pop())
            _state(memory, "_pp_ungrouped", thread).append((*held, line_of(current_op()[1])))
        return out

    return copy_smem_to_gmem


def _commit_stores(memory: Any, thread: Any) -> None:
    held = _state(memory, "_pp_ungrouped", thread)
    with memory.lock:
        while held:
            read, write, _ = held.popleft()
            memory.pending_smem_to_gmem_read_clocks[thread].append(read)
            memory.pending_smem_to_gmem_write_clocks[thread].append(write)


def _kernel_end(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def kernel_thread_finished(self: Any, thread: Any) -> Any:
        if active.record is not None:
            running, held = _state(self, "_pp_wgmma", thread), _state(self, "_pp_ungrouped", thread)
            if held:
                raise StoreNotWaited(held[0][2], committed=False)
            if running:
                raise WgmmaRunning(running[0][1])
        return original(self, thread)

    return kernel_thread_finished


def install(gpu_callbacks: Any, memory: type, interpreter: type) -> None:
    """Called once by hooks.install, with jax's gpu_callbacks, GPUSharedMemory and JaxprInterpreter."""
    wrap(interpreter, interpret=_interpret)
    wrap(gpu_callbacks, wait_smem_to_gmem=_marked, wgmma=_wgmma, wgmma_accumulator_deref=_accumulator_read,
         copy_smem_to_gmem=_store)
    wrap(memory, get_buffer_content=_operand_reads, kernel_thread_finished=_kernel_end)
