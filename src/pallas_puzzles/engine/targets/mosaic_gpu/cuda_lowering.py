"""The rules only a GPU enforces, checked on the CPU by lowering the kernel for CUDA.

`jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))` runs Pallas's Mosaic GPU lowering
here, for a Hopper GPU, without one: shared memory beyond the GPU's capacity, a wgmma tile whose M
is not a multiple of 64, vector code in warp-level code, register layouts Mosaic cannot find,
stores from registers that do not cover whole memory sectors. The interpreter runs all of these
kernels without a word. Checked on jax 0.12.0.1 (lowering takes 0.02-0.1 s per puzzle kernel). It
stops short of ptxas, so a kernel that lowers here can still, rarely, be refused on a GPU.

Mosaic GPU searches for the register and shared-memory layouts of a kernel's values, trying up to
100,000 assignments before it gives up ("Layout inference failed to find a solution"): 12 s on a
fast machine, a minute on a slow one, for a kernel that has none (a TMA window of a swizzled
buffer moved off its 8-row tiles by one row). The puzzles' kernels need fewer than 20 tries, so
while a case is checked the search stops after LAYOUT_TRIES, with the same answer in a second.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pallas_puzzles.engine.case import LOWERED_APART
from pallas_puzzles.engine.learner_lines import learner_frames
from pallas_puzzles.engine.meanings import first_meaning
from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, Launch, active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case

PLATFORM = "cuda"
LAYOUT_TRIES = 1000  # JAX's own: 100,000 (layout_inference._DEFAULT_LAYOUT_INFERENCE_FUEL, jax 0.12.0.1)

GPU_MEANINGS: tuple[tuple[str, str], ...] = (
    (r"exceeds available shared memory",
     "A block's shared memory is limited: an H100 gives one block at most 227 KiB (232448 bytes), and "
     "every SMEM scratch buffer, barrier and pipeline slot counts. Use smaller tiles, fewer slots, or "
     "more blocks in the grid."),
    (r"must be a multiple of 64",
     "A warpgroup's wgmma computes a tile of M x N with M a multiple of 64 (64 rows per warpgroup) and N "
     "a multiple of 8 up to 256. Choose tiles such as 64 x 128 or 128 x 128."),
    (r"warp-level|Can only load scalars",
     "Inside a plgpu.WarpMesh each warp runs alone, and only scalar loads and stores are allowed there; "
     "vector code belongs to warpgroup-level code (outside the WarpMesh)."),
    (r"swizzl|transformed by",
     "wgmma reads its operands from shared memory in a tiled, swizzled layout: give those SMEM buffers "
     "transforms=(plgpu.TilingTransform((8, 128 // itemsize)), plgpu.SwizzleTransform(128))."),
    (r"32 byte sectors|TransferPlan",
     "A store from registers straight into global memory must cover whole 32-byte sectors. Store the "
     "tile into shared memory, commit_smem, and copy it out with copy_smem_to_gmem."),
    (r"Layout inference failed to find a solution",
     f"Mosaic GPU found no layout for this kernel's values and buffers in {LAYOUT_TRIES:,} tries (the "
     "puzzles' kernels need fewer than 20). The usual cause is a TMA copy between global memory and a "
     "tiled, swizzled SMEM buffer (one a wgmma reads) whose window does not start on the buffer's 8-row "
     "tiles: check the starts of the pl.ds windows the copies use."),
    (r"[Ll]ayout inference|infer a possible set of layouts|layout",
     "Mosaic GPU spreads every array in registers over the 128 threads of a warpgroup in a fixed layout. "
     "Arrays whose element count is not a multiple of 128, and reductions across rows that no layout "
     "supports, have none. Keep tiles of whole warpgroup shape (e.g. (8, 128) or (64, 64)), and reduce "
     "along rows only on wgmma results."),
)


def _smem_listing(launch: Launch) -> str:
    if not launch.smem_buffers:
        return ""
    parts = [f"{shape} {dtype} ({size / 1024:g} KiB)" for shape, dtype, size in launch.smem_buffers]
    return f" Its scratch_types ask for {launch.smem_bytes / 1024:g} KiB of SMEM: {', '.join(parts)}."


def lowering_finding(exc: BaseException, record: CaseRecord) -> Finding:
    text = str(exc)
    details = text.split("Error details:", 1)[-1]  # Mosaic's verifier puts the rule after a preamble
    first = next((line.strip() for line in details.splitlines() if line.strip()), type(exc).__name__)
    meaning = first_meaning(GPU_MEANINGS, text)
    where = learner_frames(exc, record.learner_file)
    launch = record.launches[-1] if record.launches else None
    message = f"Lowered for CUDA, Mosaic GPU refused this kernel: {first[:400]}"
    if launch is not None and re.search(GPU_MEANINGS[0][0], text):
        message += _smem_listing(launch)
        where = tuple(x for x in (launch.scratch_line, launch.line) if x is not None) + where
    elif not where and launch is not None and launch.line is not None:
        where = (launch.line,)
    return Finding(FindingKind.GPU_LOWERING, message, explanation=meaning, where=where, detail=text)


def _bounded(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def infer_layout(*args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            kwargs["fuel"] = min(kwargs.get("fuel", LAYOUT_TRIES), LAYOUT_TRIES)
        return original(*args, **kwargs)

    return infer_layout


_installed = False


def install() -> None:
    """Bound Mosaic GPU's layout search while a case is checked (once per process)."""
    global _installed
    if not _installed:
        module = jax_private.layout_inference()
        module.infer_layout = _bounded(module.infer_layout)
        _installed = True


def check(entry: Callable[..., Any], args: Sequence[Any], record: CaseRecord, case: Case) -> Finding | None:
    """None when the kernel lowers for CUDA; else a finding. Errors of the learner's Python (raised while
    tracing, before any lowering) come back as exceptions for the caller to explain. The lowering's
    seconds go on the case. Where the other checker of a shared check has lowered this case, the launcher
    is only traced, and what tracing it printed, which the other printed already, is not printed again."""
    import jax

    if case.lowering == LOWERED_APART:
        with contextlib.redirect_stdout(io.StringIO()):
            record.launcher = jax.jit(entry).trace(*args).jaxpr
        return None
    traced = jax.jit(entry).trace(*args)
    record.launcher = traced.jaxpr
    start = time.perf_counter()
    try:
        traced.lower(lowering_platforms=(PLATFORM,))
    except Exception as exc:  # Mosaic GPU refused the kernel
        return lowering_finding(exc, record)
    finally:
        case.lowering_seconds = time.perf_counter() - start
    return None
