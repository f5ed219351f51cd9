"""Where the Blackwell chapter can be checked, answered without JAX (checking/support.py): `--backend gpu`
is refused in one sentence that says the chapter needs a Blackwell GPU (sm_100), not that it uses an idiom."""

from __future__ import annotations

import pytest
from helpers import COURSE

from pallas_puzzles.backends import GPU, INTERPRET, TPU
from pallas_puzzles.checking import support
from pallas_puzzles.findings import FindingKind

CHAPTER = [p for p in COURSE.puzzles if p.chapter == "blackwell"]


@pytest.mark.parametrize("puzzle", CHAPTER, ids=lambda p: p.name)
def test_the_gpu_backend_is_refused_because_the_chapter_needs_sm_100(puzzle):
    refused = support.refusal(puzzle, GPU, have_jax="0.12.0.1")
    assert refused is not None and refused.kind is FindingKind.UNSUPPORTED
    assert "Blackwell GPU (sm_100)" in refused.sentence and "idiom" not in refused.sentence
    assert f"Puzzle {puzzle.number}" in refused.sentence and "interpret" in refused.sentence
    assert refused.sentence.count(". ") == 0 and refused.sentence.endswith(".")


def test_other_refusals_keep_their_words():
    tile = COURSE.find("tcgen05_tile")
    assert support.refusal(tile, INTERPRET, have_jax="0.12.0.1") is None
    tpu = support.refusal(tile, TPU, have_jax="0.12.0.1")
    assert tpu is not None and "sm_100" not in tpu.sentence  # a TPU is no Blackwell GPU: the general sentence
    hopper = support.refusal(COURSE.find("wgmma_matmul"), TPU, have_jax="0.12.0.1")
    assert hopper is not None and "idiom" in hopper.sentence
