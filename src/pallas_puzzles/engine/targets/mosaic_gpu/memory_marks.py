"""Which elements of each fresh buffer a kernel has written.

A buffer allocated all-NaN (SMEM scratch and kernel outputs, with uninitialized_memory="nan") gets
a mask of written elements. From it the target tells an output element no block wrote from NaN
computed out of shared memory that was read before anything filled it, and names that read.

Private API (mosaic_gpu/jax_private.py lists it, with the versions checked; hooks.py passes the
class): the interpreter's GPUSharedMemory (allocate_buffer, get/store/swap_buffer_content taking
an interpret_utils.Access). The hooks only read what passes through.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import OPS, current_op, line_of, memory_name
from pallas_puzzles.engine.targets.mosaic_gpu.record import UnfilledRead, active


def _track_allocation(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def allocate_buffer(self: Any, key: Any, ref_count: int, value: Any, *args: Any, **kwargs: Any) -> Any:
        array = np.asarray(value)
        written = self.__dict__.setdefault("_pp_written", {})
        if (active.record is not None and key not in written and array.size and array.dtype.kind == "f"
                and bool(np.isnan(array.astype(np.float32)).all())):
            written[key] = np.zeros(array.shape, dtype=bool)
        return original(self, key, ref_count, value, *args, **kwargs)

    return allocate_buffer


def _mark(self: Any, key: Any, access: Any, mask: Any = None) -> None:
    written = self.__dict__.get("_pp_written", {}).get(key)
    if written is None:
        return
    if mask is None:
        written[access.range] = True
        return
    m = np.asarray(mask)
    if access.permutation is not None:
        m = m.transpose(access.inverse_permutation)
    written[access.range] = written[access.range] | m


def _track_store(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def store_buffer_content(self: Any, key: Any, access: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, key, access, value, *args, **kwargs)
        _mark(self, key, access)
        return out

    return store_buffer_content


def _track_swap(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def swap_buffer_content(self: Any, key: Any, access: Any, value: Any, mask: Any, thread: Any, *args: Any,
                            **kwargs: Any) -> Any:
        out = original(self, key, access, value, mask, thread, *args, **kwargs)
        _mark(self, key, access, mask)
        return out

    return swap_buffer_content


def _track_get(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def get_buffer_content(self: Any, key: Any, access: Any, thread: Any, *args: Any, **kwargs: Any) -> Any:
        record = active.record
        written = self.__dict__.get("_pp_written", {}).get(key)
        if record is not None and written is not None:
            if thread is None:  # the interpreter reading a kernel output back once every block has run
                record.outputs_written.append(written.copy())
            else:
                missing = int((~written[access.range]).sum())
                if missing:
                    name, source_info, _ = current_op()
                    record.note_unfilled(UnfilledRead(OPS.get(name, name), line_of(source_info), missing,
                                                      memory_name(key)))
        return original(self, key, access, thread, *args, **kwargs)

    return get_buffer_content


def install(memory: type) -> None:
    """Called once by hooks.install, with jax's GPUSharedMemory class."""
    memory.allocate_buffer = _track_allocation(memory.allocate_buffer)
    memory.store_buffer_content = _track_store(memory.store_buffer_content)
    memory.swap_buffer_content = _track_swap(memory.swap_buffer_content)
    memory.get_buffer_content = _track_get(memory.get_buffer_content)
