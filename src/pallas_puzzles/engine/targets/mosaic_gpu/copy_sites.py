"""What JAX's GPU interpreter does not pass on of a TMA load: its options, read as each thread's kernel is traced.

The interpreter's callback for plgpu.copy_gmem_to_smem gets the windows and the barrier, not the copy's
options. Read here from the equation, once per copy site, and kept by the site's source_info (the
object the callback receives), for the hooks that need them:
- `oob_mode=OOBFillMode.PROMISE_IN_BOUNDS`: the copy promises its window lies inside the array, so a GPU
  neither clamps nor fills it; a window past the end of such a copy is refused here as its copy runs
  (the interpreter fills zeros whatever the mode);
- `collective_axes` (a multicast) and the cluster's axis names: blackwell/multicast_windows.py compares
  the blocks' windows.
A copy with `predicate=` is refused here in one sentence, however the predicate was passed: the
interpreter (jax 0.12.0.1) reads it as one of the barrier's indices and fails with "Too many leaves
for PyTreeDef".

Private API (mosaic_gpu/jax_private.py, with the versions checked): JaxprInterpreter's
_interpret_copy_gmem_to_smem_p and its `mesh`; AsyncCopyTask.__call__ and the shared memory's
buffer_shape_and_dtype.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import line_of, memory_name
from pallas_puzzles.engine.targets.mosaic_gpu.record import WindowPastEnd, active

PREDICATE_REFUSED = ("A TMA load with predicate= does not run in JAX's GPU interpreter on a CPU, so this check "
                     "cannot grade it; put the copy under pl.when(...) instead, which a GPU runs the same way.")


@dataclass(frozen=True)
class CopySite:
    """One copy_gmem_to_smem of the kernel, as traced."""

    source_info: Any  # kept so that its id() stays this site's
    promises_in_bounds: bool
    collective_axes: tuple[str, ...]
    cluster_names: tuple[str, ...]


_lock = threading.Lock()
_sites: dict[int, CopySite] = {}


def site(source_info: Any) -> CopySite | None:
    """The traced copy whose callback received this source_info; None for any other."""
    return _sites.get(id(source_info))


def forget() -> None:
    """Before each case: its kernels are traced afresh."""
    with _lock:
        _sites.clear()


def _refuse_predicate(eqn: Any) -> None:
    from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
    from pallas_puzzles.findings import FindingKind
    from pallas_puzzles.results import Finding

    line = line_of(eqn.source_info)
    raise StrictViolation(Finding(FindingKind.NOT_ON_CPU, PREDICATE_REFUSED, where=(line,) if line else ()))


def _traced(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _interpret_copy_gmem_to_smem_p(self: Any, eqn: Any, *args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            params = eqn.params
            if params.get("has_user_predicate"):
                _refuse_predicate(eqn)
            mode = params.get("oob_mode")
            names = getattr(self.mesh, "cluster_names", None) if self.mesh is not None else None
            found = CopySite(eqn.source_info, getattr(mode, "name", None) == "PROMISE_IN_BOUNDS",
                             tuple(params.get("collective_axes") or ()), tuple(names or ()))
            with _lock:
                _sites[id(eqn.source_info)] = found
        return original(self, eqn, *args, **kwargs)

    return _interpret_copy_gmem_to_smem_p


def _kept_in_bounds(original: Callable[..., Any]) -> Callable[..., Any]:
    """A TMA load that promised its window lies inside its array must not reach past the end."""
    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = site(self.source_info) if active.record is not None else None
        if found is not None and found.promises_in_bounds and memory_name(self.src_allocation_key) == "GMEM":
            extents = jax_private.shared_memory_now().buffer_shape_and_dtype(self.src_allocation_key).shape
            for dim, (index, extent) in enumerate(zip(self.src_access.range, extents)):
                if isinstance(index, slice) and index.stop is not None and index.stop > extent:
                    raise WindowPastEnd(line_of(found.source_info), dim, int(index.stop), int(extent))
        return original(self, *args, **kwargs)

    return __call__


def install(gpu_callbacks: Any, jaxpr_interpreter: type) -> None:
    """Once per process, after interpreter.py's hooks (mosaic_gpu/hooks.py)."""
    jaxpr_interpreter._interpret_copy_gmem_to_smem_p = _traced(  # type: ignore[attr-defined]
        jaxpr_interpreter._interpret_copy_gmem_to_smem_p)  # type: ignore[attr-defined]
    gpu_callbacks.AsyncCopyTask.__call__ = _kept_in_bounds(gpu_callbacks.AsyncCopyTask.__call__)
