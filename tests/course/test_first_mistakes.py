"""The commonest first mistakes point the right way (issue 31, item 5): a kernel that returns its value or
rebinds its output ref is named at that line and never at a file of the tool; a block index outside the
array says which of the grid, the index_map's axis or the order of its indices is wrong."""

from __future__ import annotations

import pytest
from helpers import checked_by_dev_check

from pallas_puzzles.engine.targets.pallas_call.explain import block_index
from pallas_puzzles.findings import FindingKind

CAUSES = {  # mistake: (the explanation it must get, the text the first line it names starts with)
    "p02_grid_one_too_many": (block_index.GRID_TOO_LONG, "grid=(pl.cdiv(n, B) + 1,),"),
    "p13_ceiling_without_minus_one": (block_index.GRID_TOO_LONG, "grid=((m + BM) // BM"),
    "p04_swapped_index_map_axes": (block_index.WRONG_AXIS, "pl.BlockSpec((B0,), lambda i, j: (i,)),"),
    "p29_tile_number_as_expert": (block_index.WRONG_AXIS, "pl.BlockSpec((None, k, BN), lambda j, t, groups"),
    "p13_output_index_map_not_swapped": (block_index.WRONG_ORDER, "out_specs=pl.BlockSpec((BN, BM)"),
    "p05_output_map_transposed": (block_index.WRONG_ORDER, "out_specs=pl.BlockSpec((B1, B0)"),
    "p02_index_map_off_by_one": (FindingKind.OOB_BLOCK.explanation, "in_specs=[pl.BlockSpec((B,), lambda i: (i + 1"),
}
RETURNS = ("p01_kernel_returns_its_value", "p02_kernel_returns_its_value", "p01_output_name_rebound")


def _finding(course_check, name: str):
    result = checked_by_dev_check(course_check, "mistake")[name]
    return result.finding or result.first_failure.finding


@pytest.mark.parametrize("name", CAUSES)
def test_a_block_outside_the_array_names_its_cause(course_check, name: str):
    explanation, first_line = CAUSES[name]
    finding = _finding(course_check, name)
    assert finding.kind is FindingKind.OOB_BLOCK
    assert finding.explanation == explanation
    assert finding.where[0].text.startswith(first_line), finding.where


def test_the_three_causes_are_told_in_different_words():
    texts = {block_index.GRID_TOO_LONG, block_index.WRONG_AXIS, block_index.WRONG_ORDER,
             FindingKind.OOB_BLOCK.explanation}
    assert len(texts) == 4
    assert "element offsets" not in FindingKind.OOB_BLOCK.explanation  # wrong for a grid too long, or a swap


@pytest.mark.parametrize("name", RETURNS)
def test_a_value_handed_back_by_the_kernel_is_named_at_the_learners_line(course_check, name: str):
    finding = _finding(course_check, name)
    assert [line.file.rsplit("/", 1)[-1] for line in finding.where] == [f"{name}.py"]
    assert "pallas_call(" not in finding.where[0].text
    for text in (finding.message, finding.detail, finding.explanation):
        assert "pallas_puzzles" not in text and "sentinel" not in text, text
    assert "z_ref[...] =" in finding.message
