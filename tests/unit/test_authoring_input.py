"""Courses anyone can write: `dev new`, `dev check`, `init --course`, and every command on such a course.

The end-to-end test drives the real command in processes of its own, as an author and then a
learner would: a course made in a temporary folder, checked, turned into a workspace and
solved in watch mode with a real save.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path

from helpers import one_sentence

from pallas_puzzles.cli import app
from pallas_puzzles.course.source import OVERRIDE, RECORD


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
    hint = cli.invoke(app, ["hint", "scale_blocked"])
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
