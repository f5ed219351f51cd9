"""The grid view: frames from a check's recorded layout, the terminal step-through, and `show`."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from helpers import swapped_maps
from rich.console import Console

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.report import stepper
from pallas_puzzles.report.frames import build_view
from pallas_puzzles.report.show import check_target, page, write_page
from pallas_puzzles.results import CaseResult, OperandLayout

REPO = Path(__file__).resolve().parents[2]
TITLE = "Puzzle 4: Outer add, blocked in 2-D"


def rounded_down_grid(tmp_path: Path) -> Path:
    """Puzzle 4's solution with a grid that drops the partial last column of blocks."""
    text = (REPO / "solutions" / "04_outer_add_blocked.py").read_text()
    assert "grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0))" in text
    bad = tmp_path / "04_outer_add_blocked.py"
    bad.write_text(text.replace("grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0))", "grid=(pl.cdiv(n1, B1), n0 // B0)"))
    return bad


@pytest.fixture(scope="module")
def solved(course) -> CaseResult:
    result = check_puzzle(course.find("outer_add_blocked"), REPO / "solutions" / "04_outer_add_blocked.py", INTERPRET)
    assert result.passed
    return result.cases[0]


@pytest.fixture(scope="module")
def broken(course, tmp_path_factory) -> CaseResult:
    result = check_puzzle(course.find("outer_add_blocked"), rounded_down_grid(tmp_path_factory.mktemp("p4")), INTERPRET)
    assert not result.passed
    return result.cases[0]


def test_frames_follow_the_index_maps(solved: CaseResult) -> None:
    view = build_view(solved, TITLE)
    assert view.grid == (3, 2) and view.steps == 6 and view.bad_steps == () and view.ran is None
    x, y, z = view.boards
    # Grid (i, j) runs j fastest: x's block changes every step, y's only with i.
    assert x.touched == ((0, 0), (0, 1)) * 3 and x.copied == (True,) * 6
    assert y.touched == ((0, 0), (0, 0), (0, 1), (0, 1), (0, 2), (0, 2))
    assert y.copied == (True, False, True, False, True, False)
    assert (z.rows, z.cols) == (3, 2) and z.touched == tuple(view.points) and z.faults is None
    assert z.visited_until(2) == {(0, 0), (0, 1), (1, 0)}
    assert solved.grid_points_run == tuple(view.points)  # the interpreter ran every point, in this order


def test_unwritten_blocks_come_from_the_comparison(broken: CaseResult) -> None:
    view = build_view(broken, TITLE)
    z = view.boards[-1]
    assert view.grid == (3, 1)
    assert z.faults == (".?", ".?", ".?")  # the last column of blocks: never written
    assert view.bad_steps == ()  # no step touches them
    assert "does not cover the output" in view.verdict  # the cause, named by the checker


def test_wrong_blocks_mark_the_steps_that_wrote_them(solved: CaseResult) -> None:
    # The comparison's map at block granularity: only block (2, 1) wrong.
    from pallas_puzzles.results import Mismatch

    mismatch = Mismatch(shape=(300, 200), total=60000, n_bad=3, n_nan=0, n_unwritten=0, max_abs_error=1.0,
                        examples=(), block_shape=(128, 128), block_map=("..", "..", ".x"))
    view = build_view(dataclasses.replace(solved, passed=False, mismatch=mismatch), TITLE)
    assert view.boards[-1].faults == ("..", "..", ".x")
    assert view.bad_steps == (5,) and view.first_bad == 5


def test_large_operands_are_scaled_to_fit(solved: CaseResult) -> None:
    (call,) = solved.calls
    many = OperandLayout("big", "input", (4096, 4096), "float32", (8, 8),
                         block_indices=tuple((s, s) for s in range(6)))
    huge = dataclasses.replace(solved, calls=(dataclasses.replace(call, operands=(*call.operands, many)),))
    board = build_view(huge, TITLE, max_rows=16, max_cols=16).boards[-1]
    assert (board.rows, board.cols, board.group) == (16, 16, (32, 32))
    assert board.touched[5] == (0, 0)


def test_terminal_frame_is_readable_at_80_columns(broken: CaseResult) -> None:
    console = Console(width=80, record=True, color_system=None, file=io.StringIO())
    view = build_view(broken, TITLE, stepper.board_size_for(80), stepper.board_size_for(80))
    console.print(stepper.render_frame(view, 1, focus=2))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "step 2 of 3 · grid point (1, 0)" in text
    assert "▶ z_ref" in text and "block (0,) — reused" in text  # x's block is reused on step 2
    assert "░░??\n    ██??\n    ··??" in text  # z: written by step 1, written now, not yet; last column never


def test_cursor_keys(broken: CaseResult, solved: CaseResult) -> None:
    cursor = stepper.Cursor(build_view(solved, TITLE))
    for key in ("l", "right", " ", "h"):
        assert cursor.apply(key)
    assert cursor.step == 2
    cursor.apply("G")
    assert cursor.step == 5
    cursor.apply("l")
    assert cursor.step == 5  # stays on the last step
    cursor.apply("o")
    assert cursor.focus == 1
    assert not cursor.apply("q")


def test_page_is_self_contained(broken: CaseResult, tmp_path: Path) -> None:
    html = page(build_view(broken, TITLE))
    assert "<svg" in html and "<script>" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched
    data = json.loads(re.search(r'id="pp-data">(.*?)</script>', html, re.S).group(1))
    assert data["steps"] == 3 and len(data["boards"]) == 3
    target = write_page(tmp_path / "grid.html", build_view(broken, TITLE))
    write_page(target, build_view(broken, TITLE))  # our own page may be replaced
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>")
    with pytest.raises(Exception, match="was not written by"):
        check_target(mine)
    assert mine.read_text() == "<p>my notes</p>"


def test_show_command_writes_the_page(workspace: Path, cli) -> None:
    from pallas_puzzles.cli import app

    result = cli.invoke(app, ["show", "outer_add_blocked", "--solution", "--html", "grid.html", "--no-open"])
    assert result.exit_code == 0, result.output
    assert "grid point" in (workspace / "grid.html").read_text()
    still = cli.invoke(app, ["show", "outer_add_blocked", "--solution"])  # no TTY: one still frame
    assert still.exit_code == 0 and "step 1 of 6 · grid point (0, 0)" in still.output
    missing = cli.invoke(app, ["show", "outer_add_blocked", "--solution", "--case", "9"])
    assert missing.exit_code == 2 and "no shape case 9" in missing.output
    # the untouched stub fails: exit 1, still a view or a sentence
    failing = cli.invoke(app, ["show", "outer_add_blocked"])
    assert failing.exit_code == 1, failing.output


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Screen:
    """What a process wrote to a pseudo-terminal, colours stripped; waits for text after a mark."""

    def __init__(self, fd: int) -> None:
        self.fd, self.text, self.mark = fd, "", 0

    def wait_for(self, needle: str, timeout: float = 120.0) -> None:
        import os
        import select
        import time

        deadline = time.monotonic() + timeout
        while needle not in self.text[self.mark:]:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise AssertionError(f"never saw {needle!r} in:\n{self.text[self.mark:][-2000:]}")
            self.text += ANSI.sub("", os.read(self.fd, 65536).decode(errors="replace"))
        self.mark = self.text.index(needle, self.mark) + len(needle)


def test_show_steps_through_in_a_terminal(workspace: Path) -> None:
    """A real pseudo-terminal: keys move the step and the focus, q quits."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    env = dict(os.environ, COLUMNS="80", LINES="40", TERM="xterm")
    process = subprocess.Popen([sys.executable, "-m", "pallas_puzzles", "show", "4", "--solution"],
                               stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    screen = Screen(leader)
    try:
        screen.wait_for("step 1 of 6")
        screen.wait_for("▶ z_ref")  # the output is in focus first
        os.write(leader, b"\x1b[C")  # the right arrow
        screen.wait_for("step 2 of 6 · grid point (0, 1)")
        os.write(leader, b"l")
        screen.wait_for("step 3 of 6 · grid point (1, 0)")
        os.write(leader, b"h")
        screen.wait_for("step 2 of 6")
        os.write(leader, b"o")
        screen.wait_for("▶ x_ref")  # the focus went round from z_ref to the first operand
        os.write(leader, b"q")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


def test_show_on_a_file_that_does_not_parse(workspace: Path, cli) -> None:
    from pallas_puzzles.cli import app

    (workspace / "exercises" / "04_outer_add_blocked.py").write_text("def broken(:\n")
    result = cli.invoke(app, ["show", "outer_add_blocked"])
    assert result.exit_code == 1
    assert "invalid syntax" in result.output and "no grid to show" in result.output


def test_show_on_a_puzzle_not_started_says_why_once(workspace: Path, cli) -> None:
    """The verdict already says the puzzle was not started; the line after it only says there is no grid."""
    from pallas_puzzles.cli import app

    result = cli.invoke(app, ["show", "1"])
    assert result.exit_code == 1
    assert result.output.count("You have not started puzzle 1 yet") == 1
    assert "there is no grid to show." in result.output


def test_show_draws_the_block_an_index_map_chose_outside_the_array(workspace: Path, cli) -> None:
    """`show` on the swapped maps: every operand is drawn, the faulting block too, and no step count lies."""
    from pallas_puzzles.cli import app

    swapped_maps(workspace / "exercises")
    result = cli.invoke(app, ["show", "outer_add_blocked"])
    assert result.exit_code == 1, result.output
    text = result.output
    assert "whole array, not split into blocks" not in text  # x, y and z are all blocked
    assert "step 5 of 6 · grid point (2, 0)" in text and "the fault above happened at this step" in text
    assert "block (2,) — outside the array (valid block indices 0..1)" in text
    assert "    ░░░░!!" in text  # x's two blocks, used by steps 1-4, and the block past its end, now
    assert "!! outside the array" in text  # the legend names the mark
    assert "The kernel never ran" in text and "stopped after 0" not in text
    assert "block (0,) — copied in" in text  # y at step 5 (grid point (2, 0) asks y's block 0)
    words = " ".join(text.split())
    assert "past the end: x_ref has only 200 element(s) along that dimension" in words  # not "has 200 there"
