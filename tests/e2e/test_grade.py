"""Grading a class: `grade SUBMISSION...` writes one table, each check within its time and memory limits."""

from __future__ import annotations

import csv
import io
import json
import shutil
import time
from pathlib import Path

from helpers import one_sentence, run_cli

from pallas_puzzles.cli import app

SPIN = ("    spin = jax.lax.while_loop(lambda c: c >= 0.0, lambda c: c + 1.0, 0.0)\n"
        "    z_ref[...] = 3.0 * x_ref[...] + spin * 0.0\n")
HOG = ("    n = x.shape[0]\n"
       "    hog = jax.numpy.ones((3 << 27,), jax.numpy.float32)  # 1.5 GiB\n"
       "    x = x + hog[-1] * 0.0\n")
LIMIT = 6.0


def _solve(course: Path, workspace: Path, *files: str) -> None:
    for file in files:
        shutil.copyfile(course / "solutions" / file, workspace / "exercises" / file)


def test_grade_three_workspaces_all_solved_untouched_and_hanging(small_course: Path, tmp_path: Path):
    for name in ("solved", "untouched", "hanging"):
        made = run_cli("init", "--course", str(small_course), name, cwd=tmp_path)
        assert made.returncode == 0, made.stdout + made.stderr
    _solve(small_course, tmp_path / "solved", "01_scale.py", "02_scale_blocked.py")
    _solve(small_course, tmp_path / "hanging", "01_scale.py", "02_scale_blocked.py")
    hanging = tmp_path / "hanging" / "exercises" / "01_scale.py"
    hanging.write_text(hanging.read_text().replace("    z_ref[...] = 3.0 * x_ref[...]\n", SPIN))

    started = time.monotonic()
    graded = run_cli("grade", "solved", "untouched", "hanging", "--course", str(small_course),
                     "--csv", "grades.csv", "--json", "grades.json", "--time-limit", str(LIMIT), cwd=tmp_path)
    took = time.monotonic() - started
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = list(csv.reader(io.StringIO((tmp_path / "grades.csv").read_text())))
    assert rows == [
        ["submission", "passed", "total", "scale", "scale_blocked"],
        ["solved", "2", "2", "pass", "pass"],
        ["untouched", "0", "2", "fail:not-started", "fail:not-started"],
        ["hanging", "1", "2", "fail:timeout", "pass"],
    ]
    table = json.loads((tmp_path / "grades.json").read_text())
    by_name = {s["submission"]: s for s in table["submissions"]}
    assert [s["passed"] for s in table["submissions"]] == [2, 0, 1]
    assert by_name["hanging"]["results"]["scale"]["kind"] == "timeout"
    assert by_name["untouched"]["results"]["scale"]["message"].startswith("not-started")
    # The hanging check was stopped at its limit (plus a fresh checker's start), not left to run.
    assert LIMIT <= by_name["hanging"]["results"]["scale"]["seconds"] < LIMIT + 30
    assert took < 120, graded.stderr
    assert "hanging: 1/2 passed" in graded.stderr


def test_a_kernel_over_the_memory_limit_is_stopped_and_a_missing_file_is_marked(small_course, tmp_path, cli,
                                                                               monkeypatch):
    hungry = tmp_path / "hungry"  # a plain folder of exercise files, not a workspace; puzzle 1 not handed in
    hungry.mkdir()
    blocked = (small_course / "solutions" / "02_scale_blocked.py").read_text()
    (hungry / "02_scale_blocked.py").write_text(blocked.replace("    n = x.shape[0]\n", HOG))
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(app, ["grade", "hungry", "--course", str(small_course), "--memory-limit", "1024"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["submission,passed,total,scale,scale_blocked",
                                          "hungry,0,2,missing,fail:memory"]


def test_without_course_workspaces_are_graded_against_their_own_course_and_a_mix_is_refused(small_course, tmp_path):
    for name, course in (("ada", str(small_course)), ("bob", str(small_course)), ("carol", "builtin")):
        made = run_cli("init", "--course", course, name, cwd=tmp_path)
        assert made.returncode == 0, made.stdout + made.stderr
    _solve(small_course, tmp_path / "ada", "01_scale.py")
    graded = run_cli("grade", "ada", "bob", cwd=tmp_path)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert graded.stdout.splitlines() == ["submission,passed,total,scale,scale_blocked",
                                          "ada,1,2,pass,fail:not-started", "bob,0,2,fail:not-started,fail:not-started"]
    assert "Grading against Small course" in graded.stderr and "warning" not in graded.stderr
    mixed = run_cli("grade", "ada", "carol", cwd=tmp_path)
    assert mixed.returncode == 2 and mixed.stdout == ""
    words = one_sentence(mixed.stderr)
    assert "come from different courses" in words and "'small-course'" in words and "'pallas-puzzles'" in words


def test_grade_refuses_answers_that_do_not_come_from_the_kernel(tmp_path: Path):
    """A class cannot be passed without writing a kernel: grade applies the checker's integrity rules (issue 31)."""
    from helpers import COURSE

    solution = COURSE.find("constant_add").solution_path.read_text()
    (tmp_path / "no_kernel").mkdir()
    (tmp_path / "no_kernel" / "01_constant_add.py").write_text(
        solution.replace("    return pl.pallas_call(", "    return x + 10.0\n    return pl.pallas_call(", 1))
    (tmp_path / "peeks").mkdir()
    (tmp_path / "peeks" / "01_constant_add.py").write_text(
        solution.replace("import jax\n", "import jax\n\nfrom pallas_puzzles.engine import specs  # noqa\n", 1))
    graded = run_cli("grade", "no_kernel", "peeks", "--json", "grades.json", cwd=tmp_path)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    by_name = {s["submission"]: s for s in json.loads((tmp_path / "grades.json").read_text())["submissions"]}
    assert by_name["no_kernel"]["results"]["constant_add"]["kind"] == "outside-kernel"
    assert by_name["peeks"]["results"]["constant_add"]["kind"] == "reaches-checker"
    assert by_name["no_kernel"]["passed"] == by_name["peeks"]["passed"] == 0
