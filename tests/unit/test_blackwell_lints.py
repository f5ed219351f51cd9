"""The Blackwell target's source lints: what neither JAX's GPU interpreter nor the CPU's CUDA lowering
sees (a Hopper wgmma; features the CPU cannot run), refused in one sentence naming the line."""

from __future__ import annotations

import pytest

from pallas_puzzles.engine.targets.blackwell import lints
from pallas_puzzles.findings import FindingKind

CLEAN = """\
def body(a_smem, b_smem, acc_tmem, bar):
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, bar, accumulate=False)
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, bar, collective_axes="c")
"""


@pytest.mark.parametrize(("line", "kind", "words"), [
    ("    plgpu.wgmma(acc_ref, a_smem, b_smem)", FindingKind.HOPPER_ON_BLACKWELL, "Hopper"),
    ("    plgpu.tcgen05_mma(acc, a, b, bar, collective_axis='c')", FindingKind.NOT_ON_CPU, "2-CTA"),
    ("    peer = plgpu.cluster_ref(b_smem, {'c': 0})", FindingKind.NOT_ON_CPU, "Distributed shared memory"),
    ("    plgpu.copy_gmem_to_smem(a, s, bar, collective_axes='c', leader_tracked=p)", FindingKind.NOT_ON_CPU,
     "partitioned"),
    ("    part = plgpu.CopyPartition.PARTITIONED(0)", FindingKind.NOT_ON_CPU, "partitioned"),
])
def test_each_rule_is_one_sentence_at_its_line(line: str, kind: FindingKind, words: str):
    finding = lints.check("k.py", CLEAN + line + "\n")
    assert finding is not None and finding.kind is kind
    assert words in finding.message
    assert finding.message.count(". ") == 0 and finding.message.endswith(".") and "\n" not in finding.message
    assert [w.line for w in finding.where] == [4]


def test_a_blackwell_kernel_and_an_explicit_none_pass():
    assert lints.check("k.py", CLEAN) is None
    assert lints.check("k.py", CLEAN + "    plgpu.tcgen05_mma(acc, a, b, bar, collective_axis=None)\n") is None


def test_the_first_broken_rule_in_the_file_is_named():
    text = CLEAN + "    plgpu.cluster_ref(x, {'c': 1})\n    plgpu.wgmma(acc, a, b)\n"
    finding = lints.check("k.py", text)
    assert finding is not None and finding.where[0].line == 4


def test_a_file_that_does_not_parse_is_left_to_the_checker():
    assert lints.check("k.py", "def (:\n") is None
