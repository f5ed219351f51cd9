"""Findings name the real cause and the line that holds the mistake (issue 9).

Each test reads a mistake of course/builtin/mistakes.toml, as the session's dev check of the course
checked it, and asserts the finding's
kind, the line it names first and its wording, so that a finding cannot drift
back to blaming the grid, the padding or JAX's own words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, checked_by_dev_check, rendered

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult, Finding


@pytest.fixture(scope="module")
def folder(course_check) -> dict[str, CheckResult]:
    """The verdicts of course/builtin/mistakes.toml, from the session's dev check of the course."""
    return checked_by_dev_check(course_check, "mistake")


def checked(name: str, verdicts: dict[str, CheckResult]) -> tuple[CheckResult, str]:
    assert any(m.name == name for m in MISTAKES), name
    result = verdicts[name]
    return result, rendered(result)


def flat(report: str) -> str:
    """The report's words without the panel's borders and line breaks."""
    return " ".join(report.replace("│", " ").split())


def first_finding(result: CheckResult) -> Finding:
    finding = result.finding or result.first_failure.finding
    assert finding is not None, result
    return finding


def test_uninitialised_accumulator_is_read_before_written_not_never_written(folder: dict[str, CheckResult]):
    result, report = checked("p14_accumulate_into_output_uninitialised", folder)
    finding = first_finding(result)
    assert finding.kind is FindingKind.READ_BEFORE_WRITTEN
    assert "z_ref[...] +=" in finding.where[0].text
    assert "read before it is written" in finding.message
    assert ("grid covers" not in finding.explanation
            and "never written" not in report.split("→")[0].lower().split("first")[0])


def test_nan_from_arithmetic_is_not_blamed_on_padding(folder: dict[str, CheckResult]):
    result, report = checked("p17_running_max_from_zero", folder)
    finding = first_finding(result)
    assert finding.kind is FindingKind.NAN_ARITHMETIC
    assert "o_ref[...] = (acc / l)" in finding.where[0].text
    assert "the kernel's own arithmetic makes them" in finding.message
    assert "not read from padding" in finding.explanation
    assert FindingKind.MISMATCH_NAN.explanation[:40] not in flat(report)


def test_nan_from_padding_keeps_its_padding_explanation(folder: dict[str, CheckResult]):
    result, _ = checked("p07_scrub_nan_padding", folder)
    assert first_finding(result).kind is FindingKind.PADDING_DEPENDENT
    assert "padding or memory the kernel never wrote" in first_finding(result).message


def test_wrong_out_shape_names_out_shape_not_the_store(folder: dict[str, CheckResult]):
    result, report = checked("p03_out_shape_transposed", folder)
    finding = first_finding(result)
    assert finding.kind is FindingKind.SHAPE
    assert finding.where[0].text.startswith("out_shape=")
    assert "out_shape" in finding.message and "Invalid shape for" not in finding.message
    assert "Check the broadcast" not in flat(report)


def test_never_true_when_names_the_when_line(folder: dict[str, CheckResult]):
    result, _ = checked("p14_finish_condition_never_true", folder)
    finding = first_finding(result)
    assert finding.kind is FindingKind.NEVER_TRUE_WHEN
    assert finding.where[0].text == "@pl.when(k == pl.num_programs(2))"
    assert "never true at any grid point" in finding.message
    assert "grid covers" not in finding.explanation


@pytest.mark.parametrize(("name", "argument"), [
    ("p02_grid_one_too_many", "grid=(pl.cdiv(n, B) + 1,)"),
    ("p02_grid_rounds_down", "grid=(n // B,)"),
    ("p16_carry_on_parallel_axis", 'dimension_semantics=("parallel",)'),
])
def test_launcher_mistakes_name_the_launcher_argument(name: str, argument: str, folder: dict[str, CheckResult]):
    result, report = checked(name, folder)
    finding = first_finding(result)
    assert argument in finding.where[0].text
    assert f":{finding.where[0].line}" in report


def test_parallel_order_is_said_in_words(folder: dict[str, CheckResult]):
    finding = first_finding(checked("p16_carry_on_parallel_axis", folder)[0])
    assert finding.kind is FindingKind.ORDER
    assert finding.message.startswith("Axis 0 is marked parallel, but step (")
    assert "reads what step (" in finding.message


def test_mismatch_names_grid_points_and_store_line(folder: dict[str, CheckResult]):
    result, report = checked("p02_last_block_wrong", folder)
    case = result.first_failure
    assert case.kind is FindingKind.MISMATCH_WRONG and not case.findings
    mismatch = case.mismatch
    assert mismatch.grid_points == ((1,),)  # N=200 in blocks of 128: only the last program is wrong
    assert [line.text for line in mismatch.stored_at] == [
        "z_ref[...] = x_ref[...] + jnp.where(pl.program_id(0) == pl.num_programs(0) - 1, 1.0, 10.0)"]
    assert mismatch.origin() == ("The wrong blocks are the ones written at grid point (1,); "
                                 f"they were stored at line {mismatch.stored_at[0].line}:")
    assert "The wrong blocks are the ones written at grid point (1,)" in flat(report)


def test_blocks_nothing_stored_into_are_not_called_written():
    """A kernel that stores nothing (an untouched stub) has unwritten blocks, not blocks "written at" a point."""
    puzzle = COURSE.find("constant_add_blocked")
    stub = Path(__file__).resolve().parents[2] / "exercises" / puzzle.file
    mismatch = check_puzzle(puzzle, stub, INTERPRET).cases[0].mismatch
    assert mismatch is not None and mismatch.n_unwritten == mismatch.n_bad
    assert mismatch.origin() == "The unwritten blocks are the ones grid point (0,) should have stored."


def test_a_transposed_result_is_called_a_transpose(folder: Path):
    result, report = checked("p03_swapped_broadcast", folder)
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.MISMATCH_WRONG and "transpose of the expected one" in finding.message
    assert "Rows and columns are swapped" in flat(report) and "The numbers differ" not in flat(report)


def test_an_index_map_pinned_to_one_block_is_named_first(folder: Path):
    result, report = checked("p02_index_map_pinned_to_block_0", folder)
    finding = result.first_failure.finding
    assert "Every program read the same block of x_ref (block (0,))" in finding.message
    assert "lambda i: (0,)" in finding.where[0].text  # the index_map, not the store line, comes first


def test_a_store_of_the_wrong_shape_is_said_in_words_with_its_line_first(folder: Path):
    result, report = checked("p02_store_of_another_shape", folder)
    finding = result.first_failure.finding
    assert finding.message.startswith("A store puts a value of shape (64,) into a ref")
    assert "x_ref[:64]" in finding.where[0].text and "pallas_call" not in finding.where[0].text
    assert "Invalid shape for `swap`" not in flat(report)
