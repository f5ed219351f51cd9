"""What a new user hit (issue 8), each through the real command."""

from __future__ import annotations

import ast
import errno
import json
import os
import re
import subprocess
import sys

from helpers import REPO, heading_on_its_own_lines, one_sentence

from pallas_puzzles.cli import app

# -- init ------------------------------------------------------------------------


def test_init_never_overwrites_a_users_files(tmp_path, cli):
    target = tmp_path / "notes"
    target.mkdir()
    (target / "README.md").write_text("my own notes\n")
    result = cli.invoke(app, ["init", str(target)])
    assert result.exit_code == 2
    assert "already has README.md" in one_sentence(result.output)
    assert (target / "README.md").read_text() == "my own notes\n"
    assert sorted(p.name for p in target.iterdir()) == ["README.md"], "nothing was written"


def test_init_inside_a_workspace_refuses_to_nest(workspace, cli):
    result = cli.invoke(app, ["init", "inner"])
    text = one_sentence(result.output)
    assert result.exit_code == 2
    assert "is inside the workspace" in text and str(workspace.resolve()) in text
    assert not (workspace / "inner").exists()


def test_init_into_a_folder_with_unrelated_files_keeps_them(tmp_path, cli):
    target = tmp_path / "mixed"
    target.mkdir()
    (target / "notes.txt").write_text("keep\n")
    assert cli.invoke(app, ["init", str(target)]).exit_code == 0
    assert (target / "notes.txt").read_text() == "keep\n"


def test_init_says_the_next_command_as_it_can_be_typed(tmp_path, cli, monkeypatch):
    """A folder name with a space is quoted; the current folder needs no `cd`; an empty name is refused."""
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(app, ["init", "my puzzles"])
    assert result.exit_code == 0
    assert "Then: cd 'my puzzles' && pallas-puzzles watch" in result.output
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    result = cli.invoke(app, ["init", "."])
    assert result.exit_code == 0
    assert "Then: pallas-puzzles watch" in result.output and "cd ." not in result.output
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(app, ["init", ""])
    assert result.exit_code == 2 and "folder name" in one_sentence(result.output)


# -- the error boundary -----------------------------------------------------------


def test_an_unexpected_error_is_one_sentence_exit_3_and_a_log(workspace, cli, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def explode(*args, **kwargs):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr("pallas_puzzles.report.terminal.list_view", explode)
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 3
    text = one_sentence(result.output)
    assert "ZeroDivisionError" in text
    logs = list((tmp_path / "cache" / "pallas-puzzles" / "logs").iterdir())
    assert len(logs) == 1 and str(logs[0]) in text
    log = logs[0].read_text()
    assert "Traceback" in log and "a bug of ours" in log and "jax:" in log


def test_a_file_system_error_names_the_file(workspace, cli, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied",
                              str(workspace / "exercises" / "02_constant_add_blocked.py"))

    monkeypatch.setattr("pallas_puzzles.workspace.progress.reset_exercise", refuse)
    (workspace / "exercises" / "02_constant_add_blocked.py").write_text("# attempt\n")  # a reset would change it
    result = cli.invoke(app, ["reset", "constant_add_blocked", "--yes"])
    assert result.exit_code == 2
    text = one_sentence(result.output)
    assert "Permission denied" in text and "02_constant_add_blocked.py" in text and "writ" in text


def test_a_closed_stdout_is_not_a_traceback(workspace):
    """`pallas-puzzles list | head -1`: the reader goes away early."""
    done = subprocess.run(f"{sys.executable} -m pallas_puzzles list | head -1", shell=True,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "100"})
    assert "Traceback" not in done.stderr and "Error" not in done.stderr


# -- a read-only workspace ----------------------------------------------------------


# -- smaller things ----------------------------------------------------------------------


def test_help_shows_no_type_labels_on_flags(cli):
    for command in (["verify", "--help"], ["reset", "--help"], ["--help"]):
        result = cli.invoke(app, command)
        assert result.exit_code == 0
        assert "<bool>" not in result.output and "[[" not in result.output


def test_solution_prints_code_a_learner_can_copy(workspace, cli):
    result = cli.invoke(app, ["solution", "constant_add", "--yes"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert any(line.startswith("def constant_add(") for line in lines), result.output


def test_solution_piped_to_a_file_is_the_solution_file_itself(workspace, tmp_path):
    """`pallas-puzzles solution 4 > mine.py` at 80 columns: no line cut at the width, no padding."""
    mine = tmp_path / "mine.py"
    done = subprocess.run(f"{sys.executable} -m pallas_puzzles solution outer_add_blocked --yes > {mine}", shell=True,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    reference = (REPO / "solutions" / "04_outer_add_blocked.py").read_text()
    assert max(len(line) for line in reference.splitlines()) > 80  # the lines a terminal would fold
    assert mine.read_text() == reference
    ast.parse(mine.read_text())


def test_the_last_hint_says_solution_asks_first(workspace, cli, course):
    for _ in course.find("constant_add").hints:
        result = cli.invoke(app, ["hint", "constant_add"])
    out = " ".join(result.output.split())
    assert "pallas-puzzles solution 1" in out and "asks first" in out and "once you have solved" not in out


def test_list_keeps_file_names_whole_at_60_columns(workspace, cli, course, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0
    assert max(len(line) for line in result.output.splitlines()) <= 60
    for puzzle in course.puzzles:
        assert puzzle.file in result.output, puzzle.file


def test_list_at_80_and_100_columns_gives_each_chapter_title_its_own_whole_line(workspace, cli, course, monkeypatch):
    for width in (80, 100):
        monkeypatch.setenv("COLUMNS", str(width))
        lines = cli.invoke(app, ["list"]).output.splitlines()
        assert max(len(line) for line in lines) <= width
        for chapter in course.chapters:
            heading = f"Chapter {chapter.number}: {chapter.title}"
            assert heading_on_its_own_lines(lines, heading, width), (width, heading)  # not in a column
        for puzzle in course.puzzles:
            assert any(puzzle.file in line for line in lines), (width, puzzle.file)  # file names whole


def test_list_json_is_one_document(workspace, cli, course):
    result = cli.invoke(app, ["list", "--json"])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert [p["puzzle"] for p in document["puzzles"]] == [p.number for p in course.puzzles]
    assert document["current"] == 0 and document["solved"] == 0 and document["total"] == len(course.counted)
    assert {"name", "title", "file", "status", "backends", "hints", "hints_seen"} <= set(document["puzzles"][1])


def test_version_names_the_package_jax_and_python():
    done = subprocess.run([sys.executable, "-m", "pallas_puzzles", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    python = ".".join(map(str, sys.version_info[:3]))
    assert re.fullmatch(rf"pallas-puzzles \S+ \(jax \S+, Python {re.escape(python)}\)\n", done.stdout), done.stdout


def test_every_command_that_takes_a_puzzle_says_which_name_was_meant(workspace, cli):
    commands = (["verify"], ["lower"], ["perf"], ["show"], ["hint"], ["solution", "--yes"], ["reset", "--yes"])
    for command in commands:
        result = cli.invoke(app, [command[0], "outer_ad", *command[1:]])
        assert result.exit_code == 2, (command, result.output)
        assert "did you mean 'outer_add' (puzzle 3)?" in one_sentence(result.output), command
    # A number out of range or a name like no puzzle's gets the range, not a guess.
    for key in ("99", "zebra"):
        text = one_sentence(cli.invoke(app, ["hint", key]).output)
        assert "did you mean" not in text and "numbered 0 to" in text


def test_list_says_what_jax_the_interpreter_needs_and_where_less_is_enough(workspace, cli, course, monkeypatch):
    """The Mosaic GPU chapter runs compiled on jax 0.11 but its interpreter needs 0.12: the list shows
    the interpreter's figure (what a laptop needs) and a footnote for the backend that needs less."""
    monkeypatch.setenv("COLUMNS", "120")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0
    row = next(line for line in result.output.splitlines() if course.find("tma_copy").file in line)
    assert "jax>=0.12†" in row and "0.11" not in row, row
    assert "† what the interpreter (on the CPU) needs; --backend gpu needs 0.11" in result.output
    first = next(line for line in result.output.splitlines() if course.find("constant_add").file in line)
    assert "jax" not in first and "†" not in first
