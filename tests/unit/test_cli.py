"""CLI behaviour through the real Typer app: every command and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import one_sentence

from pallas_puzzles.cli import app

REPO = Path(__file__).resolve().parents[2]


def state(workspace: Path) -> dict:
    return json.loads((workspace / ".pallas_puzzles" / "state.json").read_text())


def test_init_writes_a_workspace_and_refuses_to_overwrite(tmp_path, cli, course):
    target = tmp_path / "ws"
    result = cli.invoke(app, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (target / "exercises").iterdir()) == sorted(p.file for p in course.puzzles)
    assert (target / "solutions").is_dir() and not any((target / "solutions").iterdir())
    assert (target / "README.md").is_file()
    assert state(target)["current"] == course.puzzles[0].name  # the tour: where a newcomer starts
    (target / "exercises" / course.puzzles[-1].file).write_text("# my work\n")
    again = cli.invoke(app, ["init", str(target)])
    assert again.exit_code == 2
    assert "already holds a workspace" in one_sentence(again.output)
    assert (target / "exercises" / course.puzzles[-1].file).read_text() == "# my work\n"


def test_verify_unknown_puzzle(workspace, cli):
    result = cli.invoke(app, ["verify", "999"])
    assert result.exit_code == 2
    assert "There is no puzzle '999'" in one_sentence(result.output)


def test_commands_outside_a_workspace(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["verify", "constant_add"], ["reset", "constant_add", "--yes"], ["watch"]):
        result = cli.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "not inside a pallas-puzzles workspace" in one_sentence(result.output)


def test_list_hint_and_solution_need_no_workspace(tmp_path, cli, monkeypatch, course):
    monkeypatch.chdir(tmp_path)
    listed = cli.invoke(app, ["list"])
    assert listed.exit_code == 0 and "Long sum" in listed.output and "progress is not tracked" in listed.output
    hint = cli.invoke(app, ["hint", "long_sum"])
    assert hint.exit_code == 0 and "Hint 1/" in hint.output and "--level 2" in hint.output
    deeper = cli.invoke(app, ["hint", "long_sum", "--level", "2"])
    assert deeper.exit_code == 0 and "Hint 2/" in deeper.output
    # The spoiler rule holds here too: nothing is solved outside a workspace, so it asks (or needs --yes).
    asked = cli.invoke(app, ["solution", "long_sum"])
    assert asked.exit_code == 2 and "--yes" in one_sentence(asked.output)
    shown = cli.invoke(app, ["solution", "long_sum", "--yes"])
    assert shown.exit_code == 0 and "def long_sum" in shown.output
    assert not list(tmp_path.iterdir())  # nothing written in a folder that is not a workspace
    unnamed = cli.invoke(app, ["hint"])
    assert unnamed.exit_code == 2 and "name one" in one_sentence(unnamed.output)


def test_unknown_backend_name(workspace, cli):
    result = cli.invoke(app, ["verify", "constant_add", "--backend", "cuda"])
    assert result.exit_code == 2
    assert "Unknown backend 'cuda'" in one_sentence(result.output)


def test_hints_reveal_one_level_at_a_time_and_say_when_none_are_left(workspace, cli, course):
    puzzle = course.find("constant_add_blocked")
    seen = []
    for level in range(1, len(puzzle.hints) + 1):
        result = cli.invoke(app, ["hint", "constant_add_blocked"])
        assert result.exit_code == 0
        out = " ".join(result.output.split())
        assert f"Hint {level}/{len(puzzle.hints)}" in out
        assert f"Hint {level + 1}/" not in out
        seen.append(out)
    assert state(workspace)["hints_seen"][puzzle.name] == len(puzzle.hints)
    final = cli.invoke(app, ["hint", "constant_add_blocked"])
    assert final.exit_code == 0
    assert "No hints left" in final.output


def test_reset_backs_up_the_learner_file_first(workspace, cli):
    exercise = workspace / "exercises" / "02_constant_add_blocked.py"
    original = exercise.read_text()
    exercise.write_text("# my precious attempt\n")
    result = cli.invoke(app, ["reset", "constant_add_blocked", "--yes"])
    assert result.exit_code == 0, result.output
    assert exercise.read_text() == original
    backups = list((workspace / ".pallas_puzzles" / "backups").iterdir())
    assert [b.read_text() for b in backups] == ["# my precious attempt\n"]
    # A second reset keeps both versions.
    exercise.write_text("# second attempt\n")
    assert cli.invoke(app, ["reset", "constant_add_blocked", "--yes"]).exit_code == 0
    assert len(list((workspace / ".pallas_puzzles" / "backups").iterdir())) == 2


def test_reset_without_a_terminal_needs_yes(workspace, cli):
    exercise = workspace / "exercises" / "02_constant_add_blocked.py"
    exercise.write_text("# keep me\n")
    result = cli.invoke(app, ["reset", "constant_add_blocked"])
    assert result.exit_code == 2
    assert "--yes" in one_sentence(result.output)
    assert exercise.read_text() == "# keep me\n"


def test_reset_of_the_untouched_stub_asks_nothing_and_backs_nothing_up(workspace, cli):
    result = cli.invoke(app, ["reset", "constant_add_blocked"])  # no terminal and no --yes: no question is needed
    assert result.exit_code == 0, result.output
    assert "already the original exercise: nothing to reset" in " ".join(result.output.split())
    assert not list((workspace / ".pallas_puzzles").glob("backups/*"))


def test_solution_asks_before_spoiling_an_unsolved_puzzle(workspace, cli, monkeypatch):
    monkeypatch.setattr("pallas_puzzles.commands.common.interactive", lambda: True)
    declined = cli.invoke(app, ["solution", "constant_add_blocked"], input="n\n")
    assert declined.exit_code == 0
    assert "pl.cdiv(n, B)" not in declined.output
    accepted = cli.invoke(app, ["solution", "constant_add_blocked"], input="y\n")
    assert accepted.exit_code == 0
    assert "pl.cdiv(n, B)" in accepted.output


def test_corrupt_state_is_recovered_with_a_warning(workspace, cli):
    (workspace / ".pallas_puzzles" / "state.json").write_text("{not json")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0
    assert "warning:" in result.output and "unreadable" in result.output and "starts afresh" in result.output
    assert state(workspace)["current"] == "tour"  # nothing was solved: a fresh start, on the tour
    assert (workspace / ".pallas_puzzles" / "state.corrupt.json").read_text() == "{not json"


def test_missing_exercise_file_is_one_sentence(workspace, cli):
    (workspace / "exercises" / "03_outer_add.py").unlink()
    result = cli.invoke(app, ["verify", "outer_add"])
    assert result.exit_code == 2
    assert "reset outer_add" in one_sentence(result.output)


def test_python_dash_m_runs_the_same_app(workspace):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pallas_puzzles", "list"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "constant_add" in done.stdout


@pytest.mark.parametrize("command", [["watch"], ["verify", "constant_add"], ["reset", "constant_add", "--yes"],
                                     ["show", "constant_add"], ["perf", "constant_add"], ["lower", "constant_add"], []])
def test_the_repository_is_never_a_workspace(command, cli, monkeypatch):
    """As rustlings refuses to run in its own repository: a clone's exercises/ are the course's pristine
    stubs, so a workspace command there says in one sentence to init a workspace, and changes nothing."""
    monkeypatch.chdir(REPO / "exercises")
    before = (REPO / "exercises" / "01_constant_add.py").read_bytes()
    result = cli.invoke(app, command)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "is the pallas-puzzles repository" in said and "pallas-puzzles init" in said
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) <= 3
    assert (REPO / "exercises" / "01_constant_add.py").read_bytes() == before
    assert not (REPO / ".pallas_puzzles").exists()


