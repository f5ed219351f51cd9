"""Every sentence a verdict or a grid view says, written once for every format.

Formats (terminal, JSON, the notebook's HTML, the grid page) add markup and
colour around these strings; none of them words a verdict of its own. Each
function takes data from `results` or `frames` and returns plain text.
"""

from __future__ import annotations

import math
from pathlib import Path

from pallas_puzzles.backends import LOWERING_CHIP, Mode
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch, Status

# The block map's cells, in the order its legend lists them.
MAP_LEGEND = ((".", "right"), ("x", "wrong"), ("N", "NaN/garbage"), ("?", "never written"))


def place(file: str, line: int) -> str:
    """A line of the learner's code as a terminal names it: the file's name and the line."""
    return f"{Path(file).name}:{line}"


def finding_place(found: Finding) -> str:
    """Where a finding happened, when its message does not say: 'on device 2 of 4, at grid point
    (program ids) (1,)'; empty when there is nothing to add."""
    parts = []
    if found.device is not None and f"device {found.device} of " not in found.message.lower():
        parts.append(f"on device {found.device} of {found.devices}")
    if found.grid_point is not None and "grid point" not in found.message:
        parts.append(f"at grid point (program ids) {found.grid_point}")
    return ", ".join(parts)


def puzzle_numbers(numbers: list[int]) -> str:
    """'puzzle 7', 'puzzles 37–43', 'puzzles 12, 15 and 37–43': runs of numbers as ranges."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    parts = [part for run in runs for part in ([f"{run[0]}–{run[-1]}"] if len(run) > 2 else map(str, run))]
    text = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"puzzle{'s' if len(set(numbers)) > 1 else ''} {text}"


def puzzles_need(puzzles: list[Puzzle], what: str) -> str:
    """'puzzles 37–43 need WHAT' ('puzzle 7 needs WHAT')."""
    return f"{puzzle_numbers([p.number for p in puzzles])} {'needs' if len(puzzles) == 1 else 'need'} {what}"


def course_size(course: Course) -> str:
    """'43 puzzles and a guided tour': the puzzles that count, and the tour apart."""
    counted = len(course.counted)
    tour = " and a guided tour" if len(course.puzzles) > counted else ""
    return f"{counted} puzzle{'s' if counted != 1 else ''}{tour}"


def puzzle_title(puzzle: Puzzle) -> str:
    return f"Puzzle {puzzle.number}: {puzzle.title}"


def mismatch_counts(m: Mismatch) -> str:
    """'21600 of 60000 output elements are wrong (21600 never written)'."""
    extras = []
    if m.n_unwritten:
        extras.append(f"{m.n_unwritten} never written")
    if m.n_nan:
        extras.append(f"{m.n_nan} NaN/garbage")
    if not math.isnan(m.max_abs_error):
        extras.append(f"max abs error {m.max_abs_error:.3g}")
    return f"{m.n_bad} of {m.total} output elements are wrong" + (f" ({', '.join(extras)})" if extras else "")


def mismatch_scope(m: Mismatch) -> str:
    return f"Output shape {m.shape}; tolerance rtol={m.rtol:g}, atol={m.atol:g}. First mismatches:"


def block_map_heading(m: Mismatch) -> str:
    return f"Where, {m.block_map_title}:"


def case_outcome(case: CaseResult) -> str:
    """'Shape case N=32: passed' (or failed)."""
    return f"Shape case {case.label}: {'passed' if case.passed else 'failed'}"


def passed_cases(result: CheckResult) -> str:
    """'passed 3 shape cases (N=32; N=7; N=100)'; for `lower`, what passing means there."""
    labels = "; ".join(c.label for c in result.cases)
    if result.mode == Mode.LOWER.value:
        return f"Mosaic lowers it for a {LOWERING_CHIP} in {len(result.cases)} shape cases ({labels})"
    return f"passed {len(result.cases)} shape cases ({labels})"


def footer(result: CheckResult) -> str:
    """'backend interpret · 0.24 s'; for `lower`, what was checked (not a backend: nothing ran)."""
    if result.mode == Mode.LOWER.value:
        return f"Mosaic's lowering for a {LOWERING_CHIP} · {result.seconds:.2f} s"
    return f"backend {result.backend} · {result.seconds:.2f} s" if result.backend else f"{result.seconds:.2f} s"


def pass_line(result: CheckResult) -> str:
    """What follows a pass's title: the cases, and where they were checked."""
    if result.mode == Mode.LOWER.value:
        return f"{passed_cases(result)}; nothing ran on a TPU · {result.seconds:.2f} s"
    return f"{passed_cases(result)} on {footer(result)}"


def cases_not_run(result: CheckResult) -> str:
    return f"({result.skipped_cases} more shape case(s) not run: fix this one first)"


PRINTED = "your code printed"


NOT_STARTED_TASK = "Fill in the lines marked TODO and save:"


NOT_STARTED = " — not started"


def not_started_line(puzzle: Puzzle) -> str:
    """One line for a run over many puzzles: `verify --all` on a fresh workspace."""
    return f"○ {puzzle_title(puzzle)}{NOT_STARTED}"


def run_tally(results: list[CheckResult], skipped: int = 0) -> str:
    """'3 passed, 1 failed, 26 not started, 7 skipped', as pytest counts: a count of none is left out.
    Untouched stubs are not failures (but not passes either), a check whose checker failed is neither a
    pass nor a fail ('1 checker error'), and a puzzle that cannot run here is skipped."""
    errors = sum(r.status is Status.ERROR for r in results)
    waiting = sum(r.not_started for r in results)
    passed = sum(r.passed for r in results)
    counts = ((passed, "passed"), (len(results) - passed - waiting - errors, "failed"), (waiting, "not started"),
              (skipped, "skipped"), (errors, f"checker error{'s' if errors != 1 else ''}"))
    return ", ".join(f"{count} {what}" for count, what in counts if count) or "nothing checked"


def solved(puzzle: Puzzle) -> str:
    return f"Puzzle {puzzle.number} ({puzzle.title}) solved!"


def next_puzzle(upcoming: Puzzle) -> str:
    return f"Next: puzzle {upcoming.number}, {upcoming.title} — {upcoming.summary}"


COURSE_FINISHED = "That was the last unsolved puzzle. Congratulations: you have finished the course!"


def interrupted(done: int, total: int, results: list[CheckResult]) -> str:
    return f"Stopped with Ctrl-C after {done} of {total} puzzles ({run_tally(results)}); nothing of yours was changed."


def kept_verdicts(count: int, folder: str) -> str:
    return (f"{count} unchanged file(s) kept the verdict of their last check "
            f"(delete {folder} to check them again).")


# -- the grid view (terminal step-through and the page) -----------------------

GRID_LEGEND = {
    "copied": "block copied in",
    "reused": "block reused",
    "visited": "used by an earlier step",
    "x": "wrong",
    "N": "NaN",
    "?": "never written",
    "outside": "outside the array",
}
FAULT_AT_STEP = "the fault above happened at this step"
BAD_BLOCK_AT_STEP = "this step's output block holds bad elements"
NOT_REACHED = "the interpreter stopped before this step"
NO_STEP_COVERS = "No step's block covers the bad elements: no program ever wrote them."
PLANNED_ONLY = ("The kernel never ran: every index_map was evaluated over the whole grid first, and the "
                "steps below are the blocks they choose.")
MOVES = {  # (role is output, a block moved) -> what the step does with its block
    (False, True): "copied in",
    (False, False): "reused (same block as the step before)",
    (True, True): "new block",
    (True, False): "same block as the step before (stays in VMEM)",
}


def stopped_after(ran: int, steps: int) -> str:
    return f"The interpreter stopped after {ran} of {steps} steps."


def outside_block(index: tuple[int, ...], counts: tuple[int, ...]) -> str:
    """A block index an index_map chose outside the array."""
    valid = ", ".join(f"0..{n - 1}" for n in counts)
    return f"block {index} — outside the array (valid block indices {valid})"
