"""Grading a class: `grade SUBMISSION...` writes one table, each check within its time and memory limits."""

from __future__ import annotations

from helpers import one_sentence

from pallas_puzzles.cli import app


def test_grade_refuses_bad_input_in_one_sentence(small_course, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(app, ["grade", "nowhere", "--course", str(small_course)])
    assert result.exit_code == 2 and "nowhere is not a folder" in one_sentence(result.output)
    result = cli.invoke(app, ["grade", ".", "--csv", "-", "--json", "-"])
    assert result.exit_code == 2 and "Only one of --csv and --json" in one_sentence(result.output)
    result = cli.invoke(app, ["grade", ".", "--memory-limit", "-5"])
    assert result.exit_code == 2 and "positive numbers" in one_sentence(result.output)


def test_the_summary_line_groups_puzzles_by_outcome(tmp_path, cli, monkeypatch):
    """A teacher reads one line per submission: puzzle numbers grouped by what happened, in ranges."""
    (tmp_path / "empty").mkdir()
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "02_constant_add_blocked.py").write_text("def broken(:\n")
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(app, ["grade", "empty", "junk"])
    assert result.exit_code == 0, result.output
    total = result.stdout.splitlines()[1].split(",")[2]
    assert f"empty: 0/{total} passed  ({1}–{total} missing)" in result.stderr
    assert f"junk: 0/{total} passed  (1, 3–{total} missing; 2 fail:syntax)" in result.stderr
