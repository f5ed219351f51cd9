"""Courses anyone can write: `dev new`, `dev check`, `init --course`, and every command on such a course.

The end-to-end test drives the real command in processes of its own, as an author and then a
learner would: a course made in a temporary folder, checked, turned into a workspace and
solved in watch mode with a real save.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import one_sentence, run_cli
from test_watch import GOODBYE, WatchProcess, _vim_save

from pallas_puzzles.cli import app
from pallas_puzzles.course.source import OVERRIDE, RECORD
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


def test_dev_check_json_reports_a_course_file_that_does_not_parse(small_course: Path, tmp_path: Path, cli):
    course = tmp_path / "unparsable"
    shutil.copytree(small_course, course)
    (course / "course.toml").write_text((course / "course.toml").read_text().replace("format = 2", "format = [2"))
    result = cli.invoke(app, ["dev", "check", str(course), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["status"] == "fail" and document["checked"] == 0 and document["course"] is None
    assert [p["subject"] for p in document["problems"]] == ["course.toml"]
    assert "is not valid TOML" in document["problems"][0]["message"]


def test_dev_commands_refuse_bad_input_in_one_sentence(small_course: Path, tmp_path: Path, cli):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli.invoke(app, ["dev", "check", str(empty)])
    assert result.exit_code == 2 and "holds no course.toml" in one_sentence(result.output)
    (empty / "mine.txt").write_text("keep me\n")
    result = cli.invoke(app, ["dev", "new", str(empty)])
    assert result.exit_code == 2 and "is not empty" in one_sentence(result.output)
    assert [p.name for p in empty.iterdir()] == ["mine.txt"]
    result = cli.invoke(app, ["dev", "check", str(small_course), "--backend", "interpret"])
    assert result.exit_code == 2 and "takes gpu or tpu" in one_sentence(result.output)


def test_dev_check_on_an_accelerator_that_is_not_there_stops_at_once(small_course: Path, cli):
    started = time.monotonic()
    result = cli.invoke(app, ["dev", "check", str(small_course), "--backend", "tpu"])
    assert result.exit_code == 2, result.output
    assert "--backend tpu needs a" in one_sentence(result.output)
    assert time.monotonic() - started < 60, "the accelerator's runs come first"


def _workspace(cli, course: str, where: Path) -> Path:
    result = cli.invoke(app, ["init", "--course", course, str(where)])
    assert result.exit_code == 0, result.output
    return where


def test_init_from_a_course_folder_records_it_and_every_command_uses_it(small_course, tmp_path, cli, monkeypatch):
    workspace = _workspace(cli, str(small_course), tmp_path / "ws")
    record = json.loads((workspace / ".pallas_puzzles" / RECORD).read_text())
    assert (record["kind"], record["course"], record["version"]) == ("folder", "small-course", "0.1.0")
    monkeypatch.chdir(workspace)
    listed = json.loads(cli.invoke(app, ["list", "--json"]).stdout)
    assert (listed["course"], listed["course_name"],
            listed["course_version"]) == ("Small course", "small-course", "0.1.0")
    assert [p["name"] for p in listed["puzzles"]] == ["scale", "scale_blocked"]
    hint = cli.invoke(app, ["hint", "2"])
    assert hint.exit_code == 0 and "Hint 1/3" in hint.output
    solution = cli.invoke(app, ["solution", "scale", "--yes"])
    assert solution.exit_code == 0 and "3.0 * x_ref[...]" in solution.output
    (workspace / "exercises" / "01_scale.py").write_text("# my work\n")
    reset = cli.invoke(app, ["reset", "scale", "--yes"])
    assert reset.exit_code == 0 and (workspace / "exercises" / "01_scale.py").read_text() == (
        small_course / "exercises" / "01_scale.py").read_text()
    monkeypatch.setenv("COLUMNS", "250")
    doctor = cli.invoke(app, ["doctor"])
    assert ("Small course 0.1.0 (small-course; 1 chapter, 2 puzzles)"
            in " ".join(doctor.output.replace("│", " ").split()))


def test_a_moved_course_is_one_sentence_and_the_override_finds_it(small_course, tmp_path, cli, monkeypatch):
    parent = tmp_path / "class"
    shutil.copytree(small_course, parent / "course")
    workspace = _workspace(cli, str(parent / "course"), parent / "ws")
    moved = tmp_path / "moved"
    parent.rename(moved)  # course and workspace together: found again, relative to the workspace
    monkeypatch.chdir(moved / "ws")
    assert cli.invoke(app, ["list"]).exit_code == 0
    (moved / "course").rename(tmp_path / "elsewhere")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 2 and "which is gone" in one_sentence(result.output) and OVERRIDE in result.output
    monkeypatch.setenv(OVERRIDE, str(tmp_path / "elsewhere"))
    assert cli.invoke(app, ["list"]).exit_code == 0
    monkeypatch.setenv(OVERRIDE, "builtin")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 2 and "belongs to the course 'small-course'" in one_sentence(result.output)
    assert workspace.name == "ws"


def _site_package(site: Path, package: str, course: Path, nested: bool) -> None:
    folder = site / package
    shutil.copytree(course, folder / "course" if nested else folder)
    (folder / "__init__.py").write_text('"""A course package."""\n')


def test_init_from_an_installed_package_by_entry_point_or_by_its_folder(small_course, tmp_path, cli, monkeypatch):
    site = tmp_path / "site"
    _site_package(site, "fancy_pkg", small_course, nested=True)
    dist = site / "fancy_course-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fancy-course\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pallas_puzzles.courses]\nfancy = fancy_pkg\n")
    _site_package(site, "plain_course_pkg", small_course, nested=False)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    for name in ("fancy", "plain_course_pkg"):
        workspace = _workspace(cli, name, tmp_path / f"ws-{name}")
        record = json.loads((workspace / ".pallas_puzzles" / RECORD).read_text())
        assert (record["kind"], record["name"]) == ("package", name)
        with monkeypatch.context() as inside:
            inside.chdir(workspace)
            assert cli.invoke(app, ["list"]).exit_code == 0
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(site)])  # uninstalled
    importlib.invalidate_caches()
    monkeypatch.chdir(tmp_path / "ws-fancy")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 2 and "'fancy', which is not installed here" in one_sentence(result.output)


def test_an_unknown_course_and_a_workspace_from_before_course_records(workspace, cli):
    result = cli.invoke(app, ["init", "--course", "no_such_course_anywhere", "elsewhere"])
    assert result.exit_code == 2 and "no installed course package" in one_sentence(result.output)
    assert not Path("elsewhere").exists()
    (workspace / ".pallas_puzzles" / RECORD).unlink()
    listed = json.loads(cli.invoke(app, ["list", "--json"]).stdout)
    assert (listed["course_name"], listed["course_version"]) == ("pallas-puzzles", "1.0")


def test_dev_check_reports_a_target_that_cannot_load_and_runs_nothing_for_it(small_course, tmp_path, cli):
    course = tmp_path / "no-target"
    shutil.copytree(small_course, course)
    text = (course / "course.toml").read_text().replace('target = "tpu-interpret"', 'target = "no_such_module:Nope"')
    (course / "course.toml").write_text(text)
    result = cli.invoke(app, ["dev", "check", str(course), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["checked"] == 0
    assert ([(p["puzzle"], p["subject"]) for p in document["problems"]]
            == [("scale", "target"), ("scale_blocked", "target")])
    assert "cannot be loaded" in document["problems"][0]["message"]
