"""A multicast copy must read the same tile in every block of its cluster.

With `collective_axes`, plgpu.copy_gmem_to_smem multicasts: Mosaic splits the tile into one share per
block of the cluster, each block loads its share from *its own* source window and sends it to every
block's SMEM. When the window depends on the block's place in the cluster (`cols` built from
`axis_index("c")`), each block ends up with a patchwork of the blocks' windows. JAX's GPU interpreter
has every block copy its own whole window, so such a kernel gets the right numbers here; this module
compares, at each multicast copy, the windows the blocks of one cluster ask for, and keeps the first
copy whose windows differ.

Which copies multicast, over which axes, mosaic_gpu/copy_sites.py reads as the kernel is traced.
Private API (blackwell/jax_private.py, with the versions checked): the GPU interpreter's
copy_gmem_to_smem callback, which sees each block's window as it runs.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pallas_puzzles.engine.targets.blackwell import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu import copy_sites, interpreter
from pallas_puzzles.engine.targets.mosaic_gpu.record import active
from pallas_puzzles.source_line import SourceLine


@dataclass(frozen=True)
class DifferingWindows:
    """The first multicast copy whose source window differed between two blocks of one cluster."""

    line: SourceLine | None
    blocks: tuple[tuple[int, ...], tuple[int, ...]]  # the two blocks' places in the cluster


@dataclass
class _Watch:
    lock: threading.Lock = field(default_factory=threading.Lock)
    issued: dict[tuple[Any, ...], int] = field(default_factory=dict)  # copies issued per block and site
    windows: dict[tuple[Any, ...], dict[tuple[int, ...], Any]] = field(default_factory=dict)
    differing: DifferingWindows | None = None


watch = _Watch()


def forget() -> None:
    """Before each case: its kernels are traced afresh."""
    with watch.lock:
        watch.issued.clear()
        watch.windows.clear()
        watch.differing = None


def _window(src: Any, transforms: Any) -> tuple[Any, ...]:
    """A copy's source, comparable between blocks: the GMEM buffer and every index of its window."""
    import jax
    import numpy as np

    leaves, tree = jax.tree.flatten(transforms)
    return np.asarray(src).tobytes(), str(tree), tuple(np.asarray(leaf).tolist() for leaf in leaves)


def _note(kwargs: dict[str, Any]) -> None:
    source_info = kwargs.get("source_info")
    site = copy_sites.site(source_info)
    location = kwargs.get("mesh_location")
    if site is None or not site.collective_axes or location is None:
        return
    block = tuple(location.block_coords)
    # The block's place along the cluster axes the copy is not collective over: blocks that differ there
    # receive separate multicasts (every axis counts as collective when the mesh names none).
    shared = [name in site.collective_axes for name in site.cluster_names] or [True] * len(block)
    others = tuple(c for c, collective in zip(block, shared) if not collective)
    window = _window(kwargs.get("src_allocation_key_as_array"), kwargs.get("src_transforms"))
    cluster = (tuple(location.device_coords), tuple(location.cluster_coords))
    with watch.lock:
        mine = (*cluster, block, location.thread_id, id(source_info))
        issue = watch.issued.get(mine, 0)
        watch.issued[mine] = issue + 1
        group = watch.windows.setdefault((*cluster, others, id(source_info), issue), {})
        group[block] = window
        if watch.differing is None:
            other = next((b for b, w in group.items() if w != window), None)
            if other is not None:
                watch.differing = DifferingWindows(interpreter.line_of(source_info), (other, block))


def _watch_copy(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def copy_gmem_to_smem(*args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            _note(kwargs)
        return original(*args, **kwargs)

    return copy_gmem_to_smem


def install() -> None:
    """Called once per process by hooks.install."""
    callbacks = jax_private.gpu_callbacks()
    callbacks.copy_gmem_to_smem = _watch_copy(callbacks.copy_gmem_to_smem)
