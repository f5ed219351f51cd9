"""The rules only a GPU enforces, checked on the CPU by lowering the kernel for CUDA.

`jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))` runs Pallas's Mosaic GPU lowering
here, for a Hopper GPU, without one: shared memory beyond the GPU's capacity, a wgmma tile whose M
is not a multiple of 64, vector code in warp-level code, register layouts Mosaic cannot find,
stores from registers that do not cover whole memory sectors. The interpreter runs all of these
kernels without a word. Checked on jax 0.12.0.1 (lowering takes 0.02-0.1 s per puzzle kernel). It
stops short of ptxas, so a kernel that lowers here can still, rarely, be refused on a GPU.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pallas_puzzles.engine.learner_lines import learner_frames
from pallas_puzzles.engine.meanings import first_meaning
from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, Launch
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

PLATFORM = "cuda"

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


def check(entry: Callable[..., Any], args: Sequence[Any], record: CaseRecord) -> Finding | None:
    """None when the kernel lowers for CUDA; else a finding. Errors of the learner's Python (raised
    while tracing, before any lowering) come back as exceptions for the caller to explain."""
    import jax

    traced = jax.jit(entry).trace(*args)
    record.launcher = traced.jaxpr
    try:
        traced.lower(lowering_platforms=(PLATFORM,))
    except Exception as exc:  # Mosaic GPU refused the kernel
        return lowering_finding(exc, record)
    return None
