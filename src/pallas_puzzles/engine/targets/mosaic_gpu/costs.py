"""What the GPU card counts while a kernel runs in the interpreter: TMA bytes, MMA FLOPs, SMEM,
and how far the copies run ahead of the waits for them.

Every copy and MMA runs at the moment it is issued (the interpreter is eager), in the thread
that issued it, so the bytes are those of the buffers read and stored inside the
copy_gmem_to_smem / copy_smem_to_gmem callbacks (and of a kernel line's own loads from and
stores into GMEM, as a Blackwell epilogue's store of a TMEM load), and an MMA's FLOPs come from the shapes of
the operands it reads. A load is in flight from its copy until a wait on the barrier it
arrives on; a wait is an overlapped one while another load of the same block is in flight, or
when the block issued an MMA since its last wait and the kernel leaves MMAs running
(wgmma_wait(n) with n >= 1, seen when the kernel is traced: the interpreter runs every MMA
synchronously, so the copy issued after it would overlap it only on a GPU).

Private API (mosaic_gpu/jax_private.py lists it, with the versions checked): the interpreter's
gpu_callbacks (copy_gmem_to_smem, _barrier_wait, _allocate_barriers, wgmma, tcgen05_mma) and GPUSharedMemory
(allocate_buffer, get/store/swap_buffer_content). The hooks only read what passes through.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import current_op, line_of, memory_name
from pallas_puzzles.engine.targets.mosaic_gpu.record import CostTally, active
from pallas_puzzles.perf.gpu_card import KernelCounts
from pallas_puzzles.source_line import SourceLine

MMAS = ("wgmma", "tcgen05_mma")
_operands = threading.local()  # .shapes: the (shape, dtype) of each buffer the running MMA read


def _tally() -> CostTally | None:
    return active.record.costs if active.record is not None and active.interpreting else None


def _key(array: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(array).ravel())


def _block(location: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in getattr(location, "cluster_coords", ()))


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def copy_gmem_to_smem(*args: Any, **kwargs: Any) -> Any:
        tally = _tally()
        if tally is not None and active.record is not None:
            block = _block(kwargs.get("mesh_location"))
            barrier = _key(kwargs["barrier_allocation_key_as_array"])
            with active.record.lock:
                tally.blocks.add(block)
                pending = tally.in_flight.setdefault(block, {})
                pending[barrier] = pending.get(barrier, 0) + 1
        return original(*args, **kwargs)

    return copy_gmem_to_smem


def _wait(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def barrier_wait(token: Any, mesh_location: Any, thread: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(token, mesh_location, thread, key, *args, **kwargs)
        tally = _tally()  # counted once the wait returned: another warpgroup's copy may have come meanwhile
        if tally is not None and active.record is not None:
            block, barrier = _block(mesh_location), _key(key)
            with active.record.lock:
                pending = tally.in_flight.setdefault(block, {})
                computed = block in tally.mma_since_wait
                tally.mma_since_wait.discard(block)
                loads = pending.get(barrier, 0)
                if loads:  # one phase's loads arrive; a producer may already have issued the next phase's
                    pending[barrier] = max(0, loads - tally.arrivals.get(barrier, loads))
                    tally.copy_waits += 1
                    if any(pending.values()) or (computed and tally.mma_left_running):
                        tally.overlapped_waits += 1
                    elif tally.serial_wait is None:
                        tally.serial_wait = line_of(kwargs.get("source_info"))
        return out

    return barrier_wait


def _barriers(original: Callable[..., Any]) -> Callable[..., Any]:
    """How many arrivals complete a phase of each barrier allocated (a wait consumes that many loads)."""
    @functools.wraps(original)
    def allocate_barriers(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        tally = _tally()
        if tally is not None and active.record is not None and isinstance(out, tuple) and len(out) == 2:
            with active.record.lock:
                for key in np.asarray(out[1]).reshape(-1, np.asarray(out[1]).shape[-1]):
                    tally.arrivals[_key(key)] = int(np.asarray(kwargs["num_arrivals"]))
        return out

    return allocate_barriers


def _mma(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def mma(*args: Any, **kwargs: Any) -> Any:
        _operands.shapes = []
        try:
            return original(*args, **kwargs)
        finally:
            shapes, _operands.shapes = _operands.shapes, None
            tally = _tally()
            if tally is not None and active.record is not None and len(shapes) >= 2:
                (a, dtype), (b, _) = shapes[0], shapes[1]
                block = _block(kwargs.get("mesh_location"))
                with active.record.lock:
                    tally.first_mma = tally.first_mma or line_of(kwargs.get("source_info"))
                    tally.mma_since_wait.add(block)
                    tally.flops += 2 * int(np.prod(a)) * int(b[-1])
                    tally.mma_dtype = tally.mma_dtype or dtype

    return mma


def _get(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def get_buffer_content(self: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, key, *args, **kwargs)
        value = out[0] if isinstance(out, tuple) else None
        tally = _tally()
        if tally is None or value is None or active.record is None:
            return out
        name, source_info, _ = current_op()
        if getattr(_operands, "shapes", None) is not None:  # inside an MMA: its operands, in order
            _operands.shapes.append((tuple(np.shape(value)), str(np.asarray(value).dtype)))
        elif name == "copy_gmem_to_smem" or (name == "_get" and memory_name(key) == "GMEM"):
            line = line_of(source_info)
            if name == "_get" and line is None:  # not a kernel line's load (the interpreter's own read-back)
                return out
            with active.record.lock:
                tally.gmem_bytes_read += int(np.asarray(value).nbytes)
                tally.read_by_line[line] = tally.read_by_line.get(line, 0) + int(np.asarray(value).nbytes)
        return out

    return get_buffer_content


def _store(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def store_buffer_content(self: Any, key: Any, access: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        tally = _tally()
        if tally is not None and active.record is not None and current_op()[0] == "copy_smem_to_gmem":
            with active.record.lock:
                tally.gmem_bytes_written += int(np.asarray(value).nbytes)
        return original(self, key, access, value, *args, **kwargs)

    return store_buffer_content


def _swap(original: Callable[..., Any]) -> Callable[..., Any]:
    """A kernel line's store straight into GMEM (a register store, as from a TMEM load) writes GMEM too."""
    @functools.wraps(original)
    def swap_buffer_content(self: Any, key: Any, access: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        tally = _tally()
        if (tally is not None and active.record is not None and current_op()[0] == "_swap"
                and memory_name(key) == "GMEM"):
            with active.record.lock:
                tally.gmem_bytes_written += int(np.asarray(value).nbytes)
        return original(self, key, access, value, *args, **kwargs)

    return swap_buffer_content


def _allocate(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def allocate_buffer(self: Any, key: Any, ref_count: int, value: Any, *args: Any, **kwargs: Any) -> Any:
        tally = _tally()
        if tally is not None and active.record is not None and memory_name(key) == "SMEM":
            with active.record.lock:
                if key not in tally.smem_keys:
                    tally.smem_keys.add(key)
                    tally.smem_bytes += int(np.asarray(value).nbytes)
        return original(self, key, ref_count, value, *args, **kwargs)

    return allocate_buffer


def _mma_wait(original: Callable[..., Any]) -> Callable[..., Any]:
    """plgpu.wgmma_wait as the kernel is traced: n >= 1 lets an MMA run on while the next step starts."""
    @functools.wraps(original)
    def wgmma_wait(n: Any, *args: Any, **kwargs: Any) -> Any:
        if active.record is not None and isinstance(n, int) and n >= 1:
            active.record.costs.mma_left_running = True
        return original(n, *args, **kwargs)

    return wgmma_wait


def install(gpu_callbacks: Any, memory: type) -> None:
    """Called once by hooks.install, after interpreter.install (whose wrappers say which op is running)."""
    gpu_callbacks.copy_gmem_to_smem = _load(gpu_callbacks.copy_gmem_to_smem)
    gpu_callbacks._barrier_wait = _wait(gpu_callbacks._barrier_wait)
    gpu_callbacks._allocate_barriers = _barriers(gpu_callbacks._allocate_barriers)
    for name in MMAS:
        if hasattr(gpu_callbacks, name):
            setattr(gpu_callbacks, name, _mma(getattr(gpu_callbacks, name)))
    memory.get_buffer_content = _get(memory.get_buffer_content)
    memory.store_buffer_content = _store(memory.store_buffer_content)
    memory.swap_buffer_content = _swap(memory.swap_buffer_content)
    memory.allocate_buffer = _allocate(memory.allocate_buffer)
    from jax.experimental.pallas import mosaic_gpu as plgpu

    plgpu.wgmma_wait = _mma_wait(plgpu.wgmma_wait)


def counts(tally: CostTally, min_bytes: int) -> KernelCounts:
    """The card's record of one case, from what the hooks counted."""
    blocks = max(len(tally.blocks), 1)
    return KernelCounts(gmem_bytes_read=tally.gmem_bytes_read, gmem_bytes_written=tally.gmem_bytes_written,
                        flops=tally.flops, mma_dtype=tally.mma_dtype, smem_bytes=tally.smem_bytes // blocks,
                        blocks=blocks, copy_waits=tally.copy_waits, overlapped_waits=tally.overlapped_waits,
                        min_bytes=min_bytes)


def busiest_load(tally: CostTally) -> SourceLine | None:
    """The learner line whose TMA loads moved the most bytes."""
    lines = [(n, line) for line, n in tally.read_by_line.items() if line is not None]
    return max(lines, key=lambda item: item[0])[1] if lines else None
