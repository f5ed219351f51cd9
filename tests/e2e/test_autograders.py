"""Grades any autograder reads: `verify --format junit` and `--format exercism`, checked against their schemas.

tests/schemas/junit.xsd restates the rules of the published JUnit schemas (Ant's and Jenkins'
xunit) and is applied with a real XML Schema validator (lxml); tests/schemas/exercism-results-v3
.schema.json restates the fields exercism's test-runner interface documents for version 3.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from helpers import one_sentence
from lxml import etree
from typer.testing import CliRunner

from pallas_puzzles.cli import app

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
REPO = Path(__file__).resolve().parents[2]
CHATTY = "    print('\\x1b[31mred\\x1b[0m and a bell\\x07 ' + 'x' * 600)\n"


@pytest.fixture(scope="module")
def junit_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "junit.xsd")))


@pytest.fixture(scope="module")
def exercism_schema() -> dict:
    return json.loads((SCHEMAS / "exercism-results-v3.schema.json").read_text())


def _graded_workspace(course: Path, folder: Path) -> Path:
    """A workspace of the small course: puzzle 1 solved (and printing control characters and 600 more),
    puzzle 2 the mistake that asks for a block past the end."""
    assert CliRunner().invoke(app, ["init", "--course", str(course), str(folder / "ws")]).exit_code == 0
    exercises = folder / "ws" / "exercises"
    solved = (course / "solutions" / "01_scale.py").read_text()
    (exercises / "01_scale.py").write_text(solved.replace("def scale(x: jax.Array) -> jax.Array:\n",
                                                          "def scale(x: jax.Array) -> jax.Array:\n" + CHATTY))
    blocked = (course / "solutions" / "02_scale_blocked.py").read_text()
    (exercises / "02_scale_blocked.py").write_text(blocked.replace("lambda i: (i,))],", "lambda i: (i + 1,))],"))
    return folder / "ws"


@pytest.fixture(scope="module")
def verified(small_course: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    """`verify --all` of one graded workspace in each format: (exit code, stdout)."""
    workspace = _graded_workspace(small_course, tmp_path_factory.mktemp("graded"))
    found = {}
    with contextlib.chdir(workspace):
        for name, flags in (("junit", ["--format", "junit"]), ("exercism", ["--format", "exercism"]),
                            ("--json", ["--json"]), ("json", ["--format", "json"])):
            result = CliRunner().invoke(app, ["verify", "--all", *flags])
            found[name] = (result.exit_code, result.stdout)
    return found


def test_junit_has_one_test_case_per_puzzle_and_validates(verified, junit_schema):
    exit_code, stdout = verified["junit"]
    assert exit_code == 1, stdout
    document = etree.fromstring(stdout.encode())
    assert junit_schema.validate(document), junit_schema.error_log
    suite = document.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"),
            suite.get("errors"), suite.get("skipped")) == ("2", "1", "0", "0")
    first, second = suite.findall("testcase")
    assert (first.get("name"), first.get("classname")) == ("01 scale", "small-course.first_steps")
    assert first.find("failure") is None and "x" * 400 in first.find("system-out").text
    assert "\x1b" not in first.find("system-out").text, "XML 1.0 cannot hold control characters"
    failure = second.find("failure")
    assert failure.get("type") == "oob-block"
    assert failure.get("message").startswith("oob-block at 02_scale_blocked.py:")
    assert "lambda i: (i + 1,)" in failure.text, "the verdict verify prints"
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["course.version"] == "0.1.0" and properties["backend"] == "interpret"


def test_the_junit_schema_rejects_what_reporters_reject(verified, junit_schema):
    """The schema is no rubber stamp: a case without a class name, or with two failures, is invalid."""
    document = etree.fromstring(verified["junit"][1].encode())
    assert junit_schema.validate(document)
    nameless = copy.deepcopy(document)
    del nameless.find("testsuite/testcase").attrib["classname"]
    assert not junit_schema.validate(nameless)
    doubled = copy.deepcopy(document)
    case = doubled.findall("testsuite/testcase")[1]
    case.insert(0, copy.deepcopy(case.find("failure")))
    assert not junit_schema.validate(doubled)


def test_results_json_follows_exercisms_version_3(verified, exercism_schema):
    exit_code, stdout = verified["exercism"]
    assert exit_code == 1, stdout
    document = json.loads(stdout)
    jsonschema.validate(document, exercism_schema)
    assert (document["version"], document["status"], document["message"]) == (3, "fail", None)
    first, second = document["tests"]
    assert (first["status"], first["message"], first["task_id"]) == ("pass", None, 1)
    assert len(first["output"]) <= 500 and first["output"].endswith("Please limit to 500 chars.")
    assert second["status"] == "fail" and second["test_code"] == "pallas-puzzles verify scale_blocked"
    assert "lambda i: (i + 1,)" in second["message"]


def test_a_passing_run_and_a_run_that_cannot_start_are_valid_results(small_course, cli, exercism_schema,
                                                                     tmp_path, monkeypatch):
    graded = _graded_workspace(small_course, tmp_path)
    for file in ("01_scale.py", "02_scale_blocked.py"):
        shutil.copyfile(small_course / "solutions" / file, graded / "exercises" / file)
    monkeypatch.chdir(graded)
    passed = cli.invoke(app, ["verify", "--all", "--format", "exercism"])
    assert passed.exit_code == 0, passed.output
    document = json.loads(passed.stdout)
    jsonschema.validate(document, exercism_schema)
    assert document["status"] == "pass" and [t["status"] for t in document["tests"]] == ["pass", "pass"]
    monkeypatch.chdir(tmp_path)  # no workspace here: exit 2, and results.json says why
    failed = cli.invoke(app, ["verify", "--all", "--format", "exercism"])
    assert failed.exit_code == 2
    document = json.loads(failed.stdout)
    jsonschema.validate(document, exercism_schema)
    assert document["status"] == "error" and "not inside a pallas-puzzles workspace" in document["message"]


def test_json_stays_todays_schema_and_an_unknown_format_is_one_sentence(verified, cli, validate_json):
    by_flag, by_format = json.loads(verified["--json"][1]), json.loads(verified["json"][1])
    validate_json(by_flag)
    assert [c["status"] for c in by_flag["checks"]] == [c["status"] for c in by_format["checks"]] == ["pass", "fail"]
    result = cli.invoke(app, ["verify", "--all", "--format", "tap"])
    assert result.exit_code == 2 and "There is no output format 'tap'" in one_sentence(result.output)


WORKFLOW = Path(__file__).resolve().parents[2] / "docs" / "ci" / "grade-with-junit.yml"


def _workflow_commands() -> list[str]:
    """The workflow's own pallas-puzzles commands (its `run:` steps other than installs)."""
    runs = [line.split("run:", 1)[1].strip() for line in WORKFLOW.read_text().splitlines()
            if line.strip().startswith("run:")]
    return [command for command in runs if command.startswith("pallas-puzzles ")]


def test_the_example_workflows_command_works_in_a_clean_checkout(small_course, tmp_path, junit_schema):
    """A learner's repository, cloned afresh, with the course installed as a package: the workflow's command
    grades it."""
    commands = _workflow_commands()
    assert commands == ["pallas-puzzles verify --all --format junit > junit.xml"]
    site = tmp_path / "site"  # the course, installed as a package (what the workflow's pip step does)
    shutil.copytree(small_course, site / "class_course" / "course")
    (site / "class_course" / "__init__.py").write_text("")
    shim = tmp_path / "bin" / "pallas-puzzles"  # the console script, for this test's Python
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pallas_puzzles "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    git = ["git", "-c", "user.email=learner@example.com", "-c", "user.name=learner"]
    learner = tmp_path / "learner"
    subprocess.run(["pallas-puzzles", "init", "--course", "class_course", str(learner)], env=env, check=True,
                   capture_output=True)
    shutil.copyfile(small_course / "solutions" / "01_scale.py", learner / "exercises" / "01_scale.py")
    # leaves a stored verdict
    subprocess.run(["pallas-puzzles", "verify", "scale"], cwd=learner, env=env, capture_output=True)
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "my work"]):
        subprocess.run(git + step, cwd=learner, check=True)
    tracked = subprocess.run(git + ["ls-files"], cwd=learner, capture_output=True, text=True, check=True).stdout
    assert ".pallas_puzzles/course.json" in tracked and ".pallas_puzzles/results" not in tracked
    checkout = tmp_path / "checkout"
    subprocess.run(git + ["clone", "-q", str(learner), str(checkout)], check=True)
    done = subprocess.run(["bash", "-c", commands[0]], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr  # one puzzle still fails: the job fails, the report says why
    document = etree.parse(str(checkout / "junit.xml"))
    assert junit_schema.validate(document), junit_schema.error_log
    cases = document.findall("testsuite/testcase")
    assert [(c.get("name"), c.find("failure") is None) for c in cases] == [("01 scale", True),
                                                                          ("02 scale_blocked", False)]
    assert cases[1].find("failure").get("type") == "not-started"


def test_autograder_documents_hold_plain_sentences_not_terminal_layout(workspace, cli):
    """An autograder shows a failure's text as it is: no box drawing, no line folded or cut with "…"."""
    exercise = workspace / "exercises" / "04_outer_add_blocked.py"
    reference = (REPO / "solutions" / exercise.name).read_text()
    exercise.write_text(reference.replace("grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0))",
                                          "grid=(pl.cdiv(n1, B1), n0 // B0)"))
    junit = etree.fromstring(cli.invoke(app, ["verify", "outer_add_blocked", "--format", "junit"]).stdout.encode())
    results = json.loads(cli.invoke(app, ["verify", "outer_add_blocked", "--format", "exercism"]).stdout)
    for text in (junit.find("testsuite/testcase/failure").text, results["tests"][0]["message"]):
        assert not set(text) & set("╭╮╰╯│─…"), text
        lines = text.splitlines()
        assert lines[0] == "✗ Puzzle 4: Outer add, blocked in 2-D"
        assert ("21600 element(s) of z_ref lie in no block that any grid point writes: with blocks of (128, 128), "
                "a grid of (3, 1) does not cover the output of shape (300, 200).") in lines
        assert "  04_outer_add_blocked.py:42: grid=(pl.cdiv(n1, B1), n0 // B0)," in lines
        assert "  (0, 128): expected -0.169247, got never written" in lines
