"""The efficiency chapter and the performance card through real checks and the CLI."""

from __future__ import annotations

from helpers import COURSE

from pallas_puzzles.dev import examples
from pallas_puzzles.engine import targets
from pallas_puzzles.perf import chips

# The TPU efficiency chapter; GPU puzzles' budgets are on the GPU card (tests/unit/test_gpu_card.py).
BUDGETED = [p for p in COURSE.puzzles if p.budget is not None and targets.get(p.target).cost_card]
def test_the_chapter_has_four_budgeted_puzzles_each_with_a_wasteful_mistake():
    assert [p.number for p in BUDGETED] == [21, 22, 23, 24]
    mistakes = examples.load(COURSE.folder, examples.MISTAKES)
    for puzzle in BUDGETED:
        assert any(m.puzzle == puzzle.name and m.kind == "over-budget" for m in mistakes), puzzle.label
        assert not any(str(n) in puzzle.hints[-1] for n in range(2, 10)), "the last hint names the idea, not numbers"


def test_watch_mode_shows_the_card_after_a_pass_whole_from_the_chapter_where_it_teaches(tmp_path):
    """Before the efficiency chapter the card is one line (it teaches nothing yet, and a small screen keeps
    the ✓ in sight); from it on, the whole card."""
    import contextlib
    import dataclasses as dc

    from test_perf_model import call, operand
    from test_watch_loop import FakeChecker, Session, solve

    from pallas_puzzles.perf.model import estimate
    from pallas_puzzles.results import CaseResult
    from pallas_puzzles.workspace.folder import init_workspace
    from pallas_puzzles.workspace.state import State, save_state

    grid = (4,)
    layout = call("add", grid, operand("x", "input", (1024,), (256,), lambda i: (i,), grid),
                  operand("z", "output", (1024,), (256,), lambda i: (i,), grid))
    perf = estimate((layout,), 1024.0, 8192, chips.chip(), "N=1024")

    class CardChecker(FakeChecker):
        def check(self, puzzle, file):
            result = super().check(puzzle, file)
            return dc.replace(result, cases=[CaseResult("N=1024", result.passed, calls=(layout,), performance=perf)])

    shown = {}
    for puzzle in (COURSE.find("constant_add"), BUDGETED[0]):
        workspace = init_workspace(tmp_path / puzzle.name, COURSE)
        save_state(workspace, State(current=puzzle.name, course=COURSE.name))
        with contextlib.chdir(workspace.root):
            solve(workspace.root, puzzle.file)
            shown[puzzle.name] = " ".join(Session(workspace.root, CardChecker()).start().quit().split())
    first, graded = shown["constant_add"], shown[BUDGETED[0].name]
    assert "Performance on a TPU" not in first and "solved!" in first
    assert "On a TPU v5e (model): HBM traffic" in first and "`pallas-puzzles perf 1` shows the card." in first
    assert "Performance on a TPU v5e (model), case N=1024" in graded and "solved!" in graded
    assert graded.index("Performance on a TPU") < graded.index("solved!")
