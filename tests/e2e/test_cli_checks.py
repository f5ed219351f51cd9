"""CLI behaviour through the real Typer app: every command and every kind of bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import as_in_a_background_run, checkable, ctrl_c_as_in_a_terminal, hungry, one_sentence, run_cli

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.cli import app

REPO = Path(__file__).resolve().parents[2]


def solve(workspace: Path, number_file: str) -> None:
    shutil.copyfile(REPO / "solutions" / number_file, workspace / "exercises" / number_file)


def state(workspace: Path) -> dict:
    return json.loads((workspace / ".pallas_puzzles" / "state.json").read_text())


def test_verify_stub_says_not_started_in_a_few_lines_then_passes_once_solved(workspace, cli):
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 1, result.output
    assert "You have not started puzzle 1 yet" in result.output and "TODO" in result.output
    # No fake mismatch table or block map for code the learner has not written.
    assert "never written" not in result.output and "expected" not in result.output
    assert len(result.output.splitlines()) <= 6, result.output
    solve(workspace, "01_constant_add.py")
    result = cli.invoke(app, ["verify", "constant_add", "--backend", "interpret"])
    assert result.exit_code == 0, result.output
    assert "passed 3 shape cases" in result.output
    assert "constant_add" in state(workspace)["solved"]
    assert (workspace / "solutions" / "01_constant_add.py").is_file()


@pytest.mark.parametrize("backend, install", [("gpu", "jax[cuda12]"), ("tpu", "jax[tpu]")])
def test_missing_accelerator_is_one_sentence(workspace, cli, backend, install):
    result = cli.invoke(app, ["verify", "constant_add", "--backend", backend])
    assert result.exit_code == 2
    text = one_sentence(result.output)
    assert f"--backend {backend} needs a" in text and install in text


def test_global_backend_option_is_honoured(workspace, cli):
    result = cli.invoke(app, ["--backend", "tpu", "verify", "constant_add"])
    assert result.exit_code == 2
    assert "--backend tpu needs a TPU" in one_sentence(result.output)


def test_list_shows_every_puzzle_and_status(workspace, cli, course, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    solve(workspace, "01_constant_add.py")
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0
    for puzzle in course.puzzles:
        assert puzzle.file in result.output and puzzle.title in result.output
    assert "solved" in result.output and "unsolved" in result.output
    assert "no gpu*" in result.output and "TPU-only idiom" in result.output
    assert f"1/{len(checkable(course.counted))} solved" in result.output  # out of what this jax runs


def test_solution_of_a_solved_puzzle_needs_no_question(workspace, cli):
    solve(workspace, "02_constant_add_blocked.py")
    assert cli.invoke(app, ["verify", "constant_add_blocked"]).exit_code == 0
    result = cli.invoke(app, ["solution", "constant_add_blocked"])
    assert result.exit_code == 0
    assert "pl.cdiv(n, B)" in result.output


def test_syntax_error_shows_the_learners_line(workspace, cli):
    exercise = workspace / "exercises" / "01_constant_add.py"
    exercise.write_text(exercise.read_text().replace("    pass", "    z_ref[...] = x_ref[...] +"))
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "cannot read your file" in result.output
    assert "z_ref[...] = x_ref[...] +" in result.output


def test_a_hanging_kernel_is_stopped_and_the_checker_recovers(workspace, cli, monkeypatch):
    monkeypatch.setenv("PALLAS_PUZZLES_TIME_LIMIT", "8")
    exercise = workspace / "exercises" / "01_constant_add.py"
    good = (REPO / "solutions" / "01_constant_add.py").read_text()
    exercise.write_text(good.replace(
        "    z_ref[...] = x_ref[...] + 10.0",
        # Counts up until float32 stops changing (2**24), then spins forever.
        "    spin = jax.lax.while_loop(lambda c: c >= 0.0, lambda c: c + 1.0, 0.0)\n"
        "    z_ref[...] = x_ref[...] + 10.0 + 0.0 * spin",
    ))
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 1
    assert "was stopped" in result.output
    exercise.write_text(good)
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0


def test_verify_all_reports_each_puzzle(workspace, cli, course):
    solve(workspace, "01_constant_add.py")
    (workspace / "exercises" / "02_constant_add_blocked.py").write_text("def nothing(:\n")
    result = cli.invoke(app, ["verify", "--all"])
    assert result.exit_code == 1
    waiting = len(checkable(course.counted)) - 2  # a chapter this jax cannot run is skipped
    # Untouched stubs: one line each, counted apart from the one real failure.
    assert f"2 passed, 1 failed, {waiting} not started" in " ".join(result.output.split())
    assert " ".join(result.output.split()).count("— not started") == waiting  # a long title may fold its line
    assert len(result.output.splitlines()) < 120, result.output  # was 814 lines before untouched stubs got one


def test_running_an_exercise_file_checks_it(workspace):
    import subprocess
    import sys

    solve(workspace, "01_constant_add.py")
    done = subprocess.run([sys.executable, "exercises/01_constant_add.py"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout


def test_an_import_error_shows_the_learners_line(workspace, cli):
    exercise = workspace / "exercises" / "01_constant_add.py"
    exercise.write_text(exercise.read_text().replace("import jax\n", "import jax\nhelper = undefined_helper(3)\n", 1))
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "failed while being imported" in out and "NameError" in out
    assert "helper = undefined_helper(3)" in out
    assert "Traceback" not in result.output
    exercise.write_text("raise MemoryError\n")  # an error with no text of its own: no dangling colon
    out = " ".join(cli.invoke(app, ["verify", "constant_add"]).output.split())
    assert "imported: MemoryError" in out and "MemoryError:" not in out


def test_a_file_is_read_as_python_reads_it_and_one_it_cannot_read_says_why(workspace, cli):
    """A byte-order mark (Windows editors' "UTF-8 with BOM") and a PEP 263 coding line are what Python
    itself accepts; bytes that are not UTF-8 get one sentence naming the line, not an import error."""
    exercise = workspace / "exercises" / "01_constant_add.py"
    good = (REPO / "solutions" / "01_constant_add.py").read_text()
    exercise.write_bytes(b"\xef\xbb\xbf" + good.encode())
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 0, result.output
    latin = good.replace("import jax\n", "import jax\n# caf\u00e9\n", 1)
    exercise.write_bytes(("# -*- coding: latin-1 -*-\n" + latin).encode("latin-1"))
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0
    exercise.write_bytes(latin.encode("latin-1"))
    result = cli.invoke(app, ["verify", "constant_add"])
    out = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    line = latin.splitlines().index("# caf\u00e9") + 1
    assert f"not UTF-8 (line {line})" in out and "UnicodeDecodeError" not in out and "imported" not in out
    assert "Traceback" not in result.output
    exercise.write_bytes(b"\xff\xfe" + good.encode())  # where no coding line can be looked for
    assert "byte 0xff is not UTF-8 (line 1)" in " ".join(cli.invoke(app, ["verify", "constant_add"]).output.split())
    exercise.write_text("# -*- coding: nosuch -*-\n" + good)
    out = " ".join(cli.invoke(app, ["verify", "constant_add"]).output.split())
    assert "unknown encoding: nosuch" in out and "line 0" not in out
    exercise.write_text("data = b'\\xff'.decode()\n" + good)  # the code's own decode error: an import error
    out = " ".join(cli.invoke(app, ["verify", "constant_add"]).output.split())
    assert "failed while being imported: UnicodeDecodeError" in out and "data = b'\\xff'.decode()" in out


def test_sys_exit_in_the_learners_file_is_a_finding_at_its_line_not_a_crash(workspace, cli):
    """sys.exit() at the top of the file, or in the launcher, ends the checker's import or call: said at the
    learner's line, with what to do, and the checker goes on (a crash would blame the grid's size)."""
    exercise = workspace / "exercises" / "01_constant_add.py"
    good = (REPO / "solutions" / "01_constant_add.py").read_text()
    exercise.write_text(good.replace("import jax\n", "import jax\nimport sys\nsys.exit(3)\n", 1))
    result = cli.invoke(app, ["verify", "constant_add"])
    out = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "crashed" not in out and "SystemExit" in out and "sys.exit(3)" in out and "__main__" in out
    exercise.write_text(good.replace("    return pl.pallas_call(", "    sys.exit()\n    return pl.pallas_call(", 1)
                        .replace("import jax\n", "import jax\nimport sys\n", 1))
    result = cli.invoke(app, ["verify", "constant_add"])
    out = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "crashed" not in out and "SystemExit" in out and "sys.exit()" in out
    exercise.write_text(good)
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0


@pytest.mark.slow
def test_ctrl_c_in_verify_all_says_how_far_it_got_and_exits_130(workspace):
    import signal
    import subprocess
    import sys
    import time

    # Deterministic: always as a test run started in the background (SIGINT ignored, and inherited so),
    # where the command would run on to exit 0 unless it is started as a terminal starts it.
    with as_in_a_background_run(), ctrl_c_as_in_a_terminal():
        process = subprocess.Popen([sys.executable, "-m", "pallas_puzzles", "verify", "--all", "--solutions"],
                                   cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = ""
        deadline = time.monotonic() + 120
        while "✓ Puzzle 1" not in seen and time.monotonic() < deadline:
            seen += process.stdout.readline()
        assert "✓ Puzzle 1" in seen, seen
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "Stopped with Ctrl-C after" in rest and "Traceback" not in rest


def test_a_corrupt_progress_file_is_rebuilt_from_solutions_and_the_stored_verdicts(workspace, cli):
    solve(workspace, "01_constant_add.py")
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0  # a pass: stored, its solution installed
    (workspace / "solutions" / "01_constant_add.py").unlink()  # so only the stored verdict tells of this one
    shutil.copyfile(REPO / "solutions" / "02_constant_add_blocked.py",  # and only solutions/ of this one
                    workspace / "solutions" / "02_constant_add_blocked.py")
    (workspace / ".pallas_puzzles" / "state.json").write_text("{not json")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())
    assert "progress was rebuilt from solutions/ and your stored verdicts: 2 puzzles solved" in words
    assert state(workspace)["solved"] == ["constant_add", "constant_add_blocked"]
    assert state(workspace)["current"] == "outer_add"
    assert (workspace / ".pallas_puzzles" / "state.corrupt.json").read_text() == "{not json"


def test_a_kept_verdict_names_the_results_folder_as_the_learner_would_type_it(workspace, cli):
    cli.invoke(app, ["verify", "constant_add"])
    again = cli.invoke(app, ["verify", "constant_add"])
    assert again.exit_code == 1
    words = " ".join(again.output.split())
    assert "kept the verdict of their last check (delete .pallas_puzzles/results/ to check them again)" in words
    assert str(workspace) not in words


def test_solution_and_solutions_are_one_flag_on_every_command(workspace, cli):
    for command in (["verify", "constant_add"], ["perf", "constant_add"], ["lower", "constant_add"]):
        for spelling in ("--solution", "--solutions"):
            result = cli.invoke(app, [*command, spelling])
            assert result.exit_code == 0, (command, spelling, result.output)
    shown = cli.invoke(app, ["show", "constant_add", "--solutions"])
    assert shown.exit_code == 0 and "step 1 of 1" in shown.output


def test_lower_on_an_untouched_stub_says_not_started_and_lists_no_passed_case(workspace, cli):
    result = cli.invoke(app, ["lower", "constant_add_blocked"])
    assert result.exit_code == 1
    assert "You have not started puzzle 2 yet" in result.output and "passed" not in result.output


def test_verify_after_a_pass_says_what_comes_next_and_hint_follows(workspace, cli):
    toured = cli.invoke(app, ["verify"])  # a fresh workspace starts on the tour, which passes as it is
    assert toured.exit_code == 0, toured.output
    assert "Next: puzzle 1, Constant add" in " ".join(toured.output.split())
    solve(workspace, "01_constant_add.py")
    passed = cli.invoke(app, ["verify"])
    assert passed.exit_code == 0, passed.output
    words = " ".join(passed.output.split())
    assert "Puzzle 1 (Constant add) solved!" in words
    assert "Next: puzzle 2, Constant add, blocked" in words and "Edit exercises/02_constant_add_blocked.py" in words
    assert state(workspace)["current"] == "constant_add_blocked"
    assert "Puzzle 2: Constant add, blocked" in cli.invoke(app, ["hint"]).output
    # Checking an earlier puzzle again leaves the learner where they are.
    assert cli.invoke(app, ["verify", "constant_add"]).exit_code == 0
    assert state(workspace)["current"] == "constant_add_blocked"


def test_verify_all_counts_the_skipped_says_why_once_and_leaves_out_what_passing_kernels_printed(workspace, cli,
                                                                                               course):
    solve(workspace, "01_constant_add.py")
    result = cli.invoke(app, ["verify", "--all"])
    assert result.exit_code == 1, result.output  # not every puzzle passes: most are not started
    lines = result.output.splitlines()
    skipped = len(course.puzzles) - len(checkable(course.puzzles))  # a chapter this jax cannot run
    waiting = len(checkable(course.counted)) - 1
    assert lines[-1] == f"2 passed, {waiting} not started" + (f", {skipped} skipped" if skipped else "")
    said = [line for line in lines if line.startswith("Skipped:")]
    refused = [support.refusal(p, INTERPRET) for p in course.puzzles if p not in checkable(course.puzzles)]
    reasons = {r.reason or r.sentence for r in refused if r is not None}
    assert len(said) == len(reasons), said  # one sentence per reason, naming every puzzle skipped for it
    if skipped:
        assert any("need jax 0.12 or newer" in line and "puzzles 37–43" in line for line in said), said
    assert "its first and last element" not in result.output  # the tour's pl.debug_print, shown by `verify 0` alone


def test_lower_says_what_it_checked_not_that_a_tpu_ran_it(workspace, cli):
    lowered = cli.invoke(app, ["lower", "constant_add", "--solution"])
    assert lowered.exit_code == 0, lowered.output
    words = " ".join(lowered.output.split())
    assert "Mosaic lowers it for a TPU v5e in 3 shape cases" in words and "nothing ran on a TPU" in words
    assert "backend tpu" not in words
    blocked = workspace / "exercises" / "02_constant_add_blocked.py"
    blocked.write_text((REPO / "solutions" / blocked.name).read_text().replace("\nB = 128", "\nB = 100"))
    refused = cli.invoke(app, ["lower", "constant_add_blocked"])
    assert refused.exit_code == 1, refused.output
    assert "Mosaic's lowering for a TPU v5e" in refused.output and "backend tpu" not in refused.output


def test_verify_stops_a_kernel_over_the_memory_limit_in_one_sentence(workspace):
    hungry(workspace / "exercises")
    stopped = run_cli("verify", "constant_add", cwd=workspace, env={"PALLAS_PUZZLES_MEMORY_LIMIT": "700"})
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    assert ("Your kernel took more than 700 MiB of memory (set PALLAS_PUZZLES_MEMORY_LIMIT to more MiB to allow "
            "it) and was stopped") in " ".join(stopped.stdout.split()).replace("│ ", "")
    assert "Traceback" not in stopped.stdout + stopped.stderr
    wrong = run_cli("verify", "constant_add", cwd=workspace, env={"PALLAS_PUZZLES_MEMORY_LIMIT": "lots"})
    assert wrong.returncode == 2 and "whole number of MiB" in one_sentence(wrong.stderr + wrong.stdout)


def test_a_printed_array_keeps_each_row_together_at_80_columns(workspace):
    """numpy wraps a printed block at 75 columns; inside the 76-wide panel each row's next piece continues
    under its bracket instead of being wrapped again into one number to a line. (The tour prints its
    blocks element by element, a form every backend prints; here it prints each block whole, as the
    interpreter allows.)"""
    tour = workspace / "exercises" / "00_tour.py"
    by_elements = '    pl.debug_print("  x block =", *(x_ref[j] for j in range(B)))'
    assert by_elements in tour.read_text()
    tour.write_text(tour.read_text().replace(by_elements, '    jax.debug.print("  x block = {}", x)'))
    shown = run_cli("verify", "0", cwd=workspace, env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    top = next(i for i, line in enumerate(lines) if "your code printed" in line)
    inside = [line.strip("│ ").rstrip() for line in lines[top + 1:] if line.startswith("│")]
    blocks = [i for i, line in enumerate(inside) if line.startswith("x block = [")]
    assert len(blocks) >= 3, inside
    for i in blocks:  # 8 numbers a block: one line of them, then the rest under the bracket
        row = inside[i] + " " + inside[i + 1]
        assert row.endswith("]") and len(row.split("[", 1)[1].rstrip("]").split()) == 8, inside[i:i + 2]
        continued = next(line for line in lines[top + 1:] if inside[i + 1] in line)
        assert continued.index(inside[i + 1]) == lines[top + 1 + i].index("[") + 1, (lines[top + 1 + i], continued)


def test_a_copy_never_started_is_named_in_the_verdict_and_jaxs_log_line_stays_out(workspace, tmp_path):
    """JAX logs "AsyncCopyDescriptor was not used" from the checker when the descriptor is collected,
    after the verdict, straight into the learner's terminal; the verdict already says it, at its line."""
    from helpers import COURSE, MISTAKES, build_mistake

    mistake = next(m for m in MISTAKES if m.name == "p25_never_copies_back")
    puzzle = COURSE.find(mistake.puzzle)
    shutil.copyfile(build_mistake(mistake, tmp_path), workspace / "exercises" / puzzle.file)
    done = run_cli("verify", puzzle.name, cwd=workspace)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the copy made at line 49 is never started" in " ".join(done.stdout.replace("│", " ").split())
    assert mistake.line in done.stdout
    assert "AsyncCopyDescriptor" not in done.stdout + done.stderr
