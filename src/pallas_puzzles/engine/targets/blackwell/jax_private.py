"""The private JAX names the Blackwell target uses beyond the Mosaic GPU family's (mosaic_gpu/jax_private.py).

The Blackwell target runs on the Mosaic GPU target's hooks and adds its own (hooks.py) on the tcgen05
callbacks of JAX's GPU interpreter, jax._src.pallas.mosaic_gpu.interpret.gpu_callbacks: they are looked
up by module attribute when a kernel is traced, so wrapping them there is enough. Checked on jax 0.10.2
and 0.12.0.1 (CHECKED_ON): the chapter needs jax >= 0.12, and on 0.10.2 the interpreter has no tcgen05
at all. The modules are the Mosaic GPU adapter's, reached through its accessors.

Imports no JAX itself (the CLI reads target.py without JAX).
"""

from __future__ import annotations

from pallas_puzzles.engine.targets.mosaic_gpu.jax_private import (
    CHECKED_ON,
    GPU_CALLBACKS,
    NEW,
    gpu_callbacks,
    gpu_shared_memory,
)
from pallas_puzzles.engine.targets.private_names import PrivateNames, names

__all__ = ["CHECKED_ON", "NAMES", "TCGEN05_CALLBACKS", "gpu_callbacks", "gpu_shared_memory"]

# The interpreter's tcgen05 callbacks, each with the source_info of the kernel line it runs for.
TCGEN05_CALLBACKS = ("tcgen05_mma", "tcgen05_commit_arrive", "async_load_tmem", "async_store_tmem",
                     "async_copy_smem_to_tmem")

NAMES = PrivateNames("blackwell", CHECKED_ON, (
    # hooks.py: which call each access is, TMEM windows written and read
    *names(GPU_CALLBACKS, *TCGEN05_CALLBACKS, use="patched", on=NEW),
    # multicast_windows.py: each block's window of a multicast copy (its options: mosaic_gpu/copy_sites.py)
    *names(GPU_CALLBACKS, "copy_gmem_to_smem", use="patched", on=NEW),
))
