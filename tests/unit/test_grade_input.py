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
