"""Mosaic TPU's block-shape rules, checked while a kernel is interpreted.

On a puzzle whose only hardware is a TPU, a kernel that passes in the
interpreter but breaks these rules would not compile for the chip it is
written for; `lower` says so, and now `verify` does too, before the kernel
runs. The rules are those of Mosaic's lowering, _check_block_mappings
(pallas_call/jax_private.py; the same on the versions checked there), for
a TPU with 8 sublanes of 128 lanes:
- a block of rank 2 or more: its last dimension a multiple of 128 or the
  array's, its second-to-last a multiple of 8 or the array's;
- a block of rank 1: the whole array, a multiple of 8 * 128, or a power of
  two of at least 128 elements per 32-bit word (256 for bfloat16, 512 for int8).
Operands left in HBM (pl.ANY), in SMEM without a window, and semaphores have
no block to check. A BlockSpec's pipeline_mode must be pl.Buffered(1) or (2), without
lookahead (lower_jaxpr_into_pipelined_module), which the interpreter does not model;
tests/engine/test_tpu_blocks.py compares this with the lowering.
"""

from __future__ import annotations

import re

from pallas_puzzles.engine.targets.pallas_call.explain.lowering import meaning
from pallas_puzzles.engine.targets.pallas_call.intercept.call_reader import memory_space_name
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

SUBLANES, LANES = 8, 128
_UNCHECKED = {"any", "hbm", "semaphore", "smem"}


def _bits(dtype: str) -> int:
    if dtype == "bool":
        return 32  # Mosaic keeps booleans in 32-bit words
    found = re.findall(r"\d+", dtype)
    return int(found[-1]) if found else 32


def _buffering(mode: object) -> str | None:
    """Why Mosaic's pallas_call pipeline would refuse this pipeline_mode (pl.Buffered), or None. Its
    lowering (lower_jaxpr_into_pipelined_module) takes one or two buffers and no lookahead; only
    emit_pipeline takes more."""
    count = getattr(mode, "buffer_count", None)
    if mode is None or count is None:
        return None
    if not isinstance(count, int) or not 1 <= count <= 2:
        return (f"it asks for pl.Buffered({count}), and a pallas_call's pipeline has only single (1) and double (2) "
                "buffering (emit_pipeline takes more)")
    if getattr(mode, "use_lookahead", False):
        return "it asks for a lookahead, which a pallas_call's pipeline does not do (emit_pipeline does)"
    return None


def problem(info: BlockInfo) -> str | None:
    """Why Mosaic would refuse this operand's block, or None."""
    buffering = _buffering(info.pipeline_mode)
    if buffering is not None:
        return buffering
    if info.block_dims is None or info.block_shape is None:
        return None  # the whole array (no BlockSpec), or element offsets: nothing to check
    if memory_space_name(info.memory_space) in _UNCHECKED:
        return None
    block, array = tuple(info.block_dims), info.array_shape
    if len(block) >= 2:
        last, second = block[-1], block[-2]
        if (last == array[-1] or last % LANES == 0) and (second == array[-2] or second % SUBLANES == 0):
            return None
        return (f"its block {block} has last two dimensions ({second}, {last}); on a TPU they must be divisible "
                f"by {SUBLANES} and {LANES} (or equal the array's, {tuple(array[-2:])})")
    if len(block) == 1:
        size, packing = block[0], 32 // min(32, _bits(info.dtype))
        power_of_two = size >= LANES * packing and size & (size - 1) == 0
        if size == array[0] or size % (SUBLANES * LANES) == 0 or power_of_two:
            return None
        return (f"its 1-D block of {size} elements is not the whole array ({array[0]}), not a multiple of "
                f"{SUBLANES * LANES} and not a power of two of at least {LANES * packing}")
    return None


def check(record: CallRecord) -> None:
    """Raise StrictViolation for the first blocked operand a TPU would refuse."""
    for info in record.inputs + record.outputs:
        why = problem(info)
        if why is not None:
            rule = ("buffering are supported" if _buffering(info.pipeline_mode) is not None
                    else "rank 1 block shapes" if len(info.block_dims or ()) == 1 else "divisible by 8 and 128")
            raise StrictViolation(Finding(
                FindingKind.TPU_LOWERING,
                f"{info.role.capitalize()} {info.name} would not compile for a TPU, the only hardware this "
                f"puzzle runs on: {why}.",
                explanation=meaning(rule), where=record.where(info), array=info.name))
