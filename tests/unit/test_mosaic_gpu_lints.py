"""The Mosaic GPU (Hopper) target's source lint: a Blackwell instruction (tcgen05, tensor memory) in a Hopper
puzzle lowers and interprets on a CPU, which treats every kernel as sm_90; it is refused in one sentence at
its line. The Blackwell target's opposite rule (a Hopper wgmma) is in test_blackwell_lints.py."""

from __future__ import annotations

import pytest

from pallas_puzzles.engine.targets.blackwell import lints as blackwell_lints
from pallas_puzzles.engine.targets.mosaic_gpu import lints
from pallas_puzzles.findings import FindingKind

HOPPER = """\
def body(a_smem, b_smem, acc_ref, bar):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    plgpu.wgmma_wait(0)
"""


@pytest.mark.parametrize(("line", "name"), [
    ("    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, bar, accumulate=False)", "tcgen05_mma"),
    ("    plgpu.tcgen05_commit_arrive(bar)", "tcgen05_commit_arrive"),
    ("    out = plgpu.async_load_tmem(acc_tmem)", "async_load_tmem"),
    ("    plgpu.wait_load_tmem()", "wait_load_tmem"),
    ("    scratch = [plgpu.TMEM((128, 128), jnp.float32)]", "TMEM"),
    ("    from jax.experimental.pallas.mosaic_gpu import tcgen05_mma; tcgen05_mma(a, b, c, d)", "tcgen05_mma"),
])
def test_a_blackwell_instruction_in_a_hopper_puzzle_is_one_sentence_at_its_line(line: str, name: str):
    finding = lints.check("k.py", HOPPER + line + "\n", lints.HOPPER)
    assert finding is not None and finding.kind is FindingKind.BLACKWELL_ON_HOPPER
    assert f"plgpu.{name}" in finding.message and "Blackwell" in finding.message and "Hopper" in finding.message
    assert finding.message.count(". ") == 0 and finding.message.endswith(".") and "\n" not in finding.message
    assert [w.line for w in finding.where] == [4]


def test_a_hopper_kernel_passes_and_each_target_keeps_its_own_rules():
    assert lints.check("k.py", HOPPER, lints.HOPPER) is None
    blackwell = "def body(acc_tmem, a, b, bar):\n    plgpu.tcgen05_mma(acc_tmem, a, b, bar, accumulate=False)\n"
    assert blackwell_lints.check("k.py", blackwell) is None  # tcgen05 is what the Blackwell chapter teaches
    assert blackwell_lints.check("k.py", HOPPER).kind is FindingKind.HOPPER_ON_BLACKWELL


def test_the_scanning_has_one_home():
    """Both targets' lints are tables for one scanner, not two copies of it."""
    assert not hasattr(blackwell_lints, "_called_name") and blackwell_lints.RULES.__class__ is lints.Rules
