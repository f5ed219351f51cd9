"""Courses anyone can write: `dev new`, `dev check`, `init --course`, and every command on such a course.

The end-to-end test drives the real command in processes of its own, as an author and then a
learner would: a course made in a temporary folder, checked, turned into a workspace and
solved in watch mode with a real save.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers import one_sentence, run_cli
from test_watch import GOODBYE, WatchProcess, _vim_save

from pallas_puzzles.cli import app
from pallas_puzzles.workspace.folder import Workspace
from pallas_puzzles.workspace.state import load_state

PROBLEM = re.compile(r"^✗ ", re.M)


def test_dev_new_dev_check_init_and_watch_work_end_to_end(tmp_path: Path):
    course = tmp_path / "Linear_Algebra"
    made = run_cli("dev", "new", str(course), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    checked = run_cli("dev", "check", cwd=course)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "dev check: Linear algebra 0.1.0: 2 puzzles" in checked.stdout and "no problems" in checked.stdout
    assert not PROBLEM.search(checked.stdout)

    started = run_cli("init", "--course", str(course), "ws", cwd=tmp_path)
    assert started.returncode == 0, started.stdout + started.stderr
    workspace = tmp_path / "ws"
    assert sorted(p.name for p in (workspace / "exercises").iterdir()) == ["01_scale.py", "02_scale_blocked.py"]
    listed = run_cli("list", cwd=workspace)
    assert listed.returncode == 0 and "Linear algebra 0.1.0" in listed.stdout and "Scale a vector" in listed.stdout
    as_file = subprocess.run([sys.executable, "exercises/01_scale.py"], cwd=workspace, capture_output=True,
                             text=True, timeout=300)  # python FILE checks it against the workspace's course
    assert as_file.returncode == 1, as_file.stdout + as_file.stderr
    assert "You have not started puzzle 1" in as_file.stdout and "01_scale.py:20" in as_file.stdout

    watch = WatchProcess(workspace)
    try:
        assert watch.wait_for("You have not started puzzle 1", timeout=120), watch.text
        time.sleep(0.5)
        _vim_save(workspace / "exercises" / "01_scale.py", (course / "solutions" / "01_scale.py").read_text())
        assert watch.wait_for("solved!", timeout=60), watch.text
        watch.type("n")  # the pass stays on screen until the learner moves on
        assert watch.wait_for("Puzzle 2: Scale a vector, block by block", timeout=60), watch.text
        watch.type("q")
        assert watch.process.wait(timeout=60) == 0
        assert watch.text.rstrip().endswith(GOODBYE), watch.text
    finally:
        watch.kill()
    from pallas_puzzles.course.reader import load_course

    state, _ = load_state(Workspace(workspace), load_course(course))
    assert state.current == "scale_blocked" and state.solved == {"scale"}
    assert (workspace / "solutions" / "01_scale.py").read_text() == (course / "solutions" / "01_scale.py").read_text()


def _break(course: Path) -> None:
    """Seven problems in one course: each must get its own line."""
    text = (course / "course.toml").read_text()
    text = text.replace('version = "0.1.0"\n', "")
    text = re.sub(r'hints = \[\n    "The kernel is the one.*?\n\]\n', "", text, flags=re.S)
    (course / "course.toml").write_text(text)
    shutil.copyfile(course / "solutions" / "01_scale.py", course / "exercises" / "01_scale.py")  # passes, no TODO
    mistakes = (course / "mistakes.toml").read_text().replace('kind = "oob-block"', 'kind = "oob-read"')
    (course / "mistakes.toml").write_text(mistakes)
    (course / "correct.toml").write_text((course / "correct.toml").read_text() + (
        '\n[[correct]]\nname = "p01_twice_not_thrice"\npuzzle = "scale"\nwhy = "wrong, listed as right."\n'
        "[[correct.edits]]\nold = '''\n    z_ref[...] = 3.0 * x_ref[...]\n'''\n"
        "new = '''\n    z_ref[...] = 2.0 * x_ref[...]\n'''\n"
        '\n[[correct]]\nname = "p02_edit_that_does_not_apply"\npuzzle = "scale_blocked"\nwhy = "stale."\n'
        "[[correct.edits]]\nold = '''no such text'''\nnew = '''x'''\n"))
    (course / "notes.txt").write_text("drafts\n")


def test_dev_check_gives_one_line_per_problem_and_exits_1(small_course: Path, tmp_path: Path):
    course = tmp_path / "broken"
    shutil.copytree(small_course, course)
    _break(course)
    checked = run_cli("dev", "check", str(course), cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    lines = PROBLEM.findall(checked.stdout)
    expected = [
        "course: course.toml: it gives no `version`",
        "scale_blocked: hints: the puzzle has no hints",
        "scale: stub: 01_scale.py has no TODO marker",
        "scale: stub: the stub passes as written",
        "scale_blocked: p02_index_map_one_ahead: must fail with oob-read, but fails with oob-block at "
        "p02_index_map_one_ahead.py:",
        "scale: p01_twice_not_thrice: fails: mismatch-wrong",
        "scale_blocked: p02_edit_that_does_not_apply: edit 1's `old` text occurs 0 times in the solution",
        "course: notes.txt: a course folder holds",
    ]
    for fragment in expected:
        assert f"✗ {fragment}" in checked.stdout, (fragment, checked.stdout)
    assert len(lines) == len(expected), checked.stdout
    assert f"{len(expected)} problems" in checked.stdout.splitlines()[-1]
    assert "Traceback" not in checked.stdout + checked.stderr


def test_dev_check_on_an_accelerator_that_is_not_there_stops_at_once(small_course: Path, cli):
    started = time.monotonic()
    result = cli.invoke(app, ["dev", "check", str(small_course), "--backend", "tpu"])
    assert result.exit_code == 2, result.output
    assert "--backend tpu needs a" in one_sentence(result.output)
    assert time.monotonic() - started < 60, "the accelerator's runs come first"


