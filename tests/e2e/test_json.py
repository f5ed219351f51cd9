"""`--json`: one valid document on stdout, matching the schema shipped in the package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from helpers import checkable, json_schema

from pallas_puzzles.cli import app
from pallas_puzzles.report.formats import FORMATS

REPO = Path(__file__).resolve().parents[2]


def validate(document: dict) -> None:
    jsonschema.validate(document, json_schema())


def _verify_json(cli, *args: str) -> tuple[int, dict]:
    result = cli.invoke(app, ["verify", *args, "--json"])
    document = json.loads(result.stdout)  # stdout holds the document and nothing else
    validate(document)
    return result.exit_code, document


def test_verify_7_json_for_a_stub_a_solution_and_an_out_of_bounds_read(workspace, cli):
    code, stub = _verify_json(cli, "7")
    assert code == 1 and stub["status"] == "fail" and stub["kind"] == "not-started"
    assert {"puzzle", "name", "status", "backend", "seconds", "cases"} <= set(stub)
    assert stub["puzzle"] == 7 and stub["name"] == "long_sum" and stub["backend"] == "interpret"
    # An untouched stub is not run: its one finding says so, with the lines marked TODO.
    assert stub["cases"] == [] and [f["kind"] for f in stub["findings"]] == ["not-started"]
    assert stub["findings"][0]["where"] and "TODO" in stub["findings"][0]["where"][0]["text"]

    exercise = workspace / "exercises" / "07_long_sum.py"
    shutil.copyfile(REPO / "solutions" / "07_long_sum.py", exercise)
    code, solved = _verify_json(cli, "7")
    assert code == 0 and solved["status"] == "pass" and solved["kind"] is None
    assert all(case["status"] == "pass" and not case["findings"] for case in solved["cases"])

    source = exercise.read_text()
    exercise.write_text(source.replace("x_ref[:, pl.ds(start, B1)]", "x_ref[:, pl.ds(start + B1, B1)]"))
    assert exercise.read_text() != source
    code, wrong = _verify_json(cli, "7")
    assert code == 1 and wrong["kind"] == "oob-read"
    finding = wrong["cases"][0]["findings"][0]
    assert finding["line"] and "pl.ds(start + B1, B1)" in finding["where"][0]["text"]
    assert finding["grid_point"] is not None and finding["explanation"]


def test_verify_all_json_and_a_json_error(workspace, cli, course):
    result = cli.invoke(app, ["verify", "--all", "--solutions", "--json"])
    document = json.loads(result.stdout)
    validate(document)
    assert result.exit_code == 0 and document["status"] == "pass"
    assert document["passed"] == len(document["checks"]) == len(checkable(course.puzzles))
    assert document["skipped"] == [p.number for p in course.puzzles if p not in checkable(course.puzzles)]
    missing = cli.invoke(app, ["verify", "999", "--json"])
    assert missing.exit_code == 2
    error = json.loads(missing.stdout)
    validate(error)
    assert "There is no puzzle '999'" in error["error"]


def test_verify_all_json_counts_untouched_stubs_apart_from_failures(workspace, cli, course):
    (workspace / "exercises" / "02_constant_add_blocked.py").write_text("def nothing(:\n")
    code, document = _verify_json(cli, "--all")
    assert code == 1 and document["status"] == "fail"
    assert document["failed"] == 1 and document["not_started"] == len(checkable(course.counted)) - 1
    assert document["passed"] == 1  # the tour
    waiting = [c for c in document["checks"] if c["kind"] == "not-started"]
    assert len(waiting) == document["not_started"] and all(c["cases"] == [] for c in waiting)


def test_a_format_is_one_module_and_one_line_in_the_registry(workspace, cli, monkeypatch, tmp_path):
    """The seam a later format (JUnit XML, exercism's results.json) plugs into: a class and a registry line."""
    import sys

    from pallas_puzzles.report import formats

    plugin = tmp_path / "tally_format.py"
    plugin.write_text(
        "from pallas_puzzles.report.formats import Format\n"
        "class Tally(Format):\n"
        "    name = 'tally'\n"
        "    document = True\n"
        "    def check(self, verdict):\n"
        "        return None\n"
        "    def run(self, report):\n"
        "        return ' '.join(f'{v.puzzle.name}={v.result.status.value}' for v in report.verdicts) + '\\n'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(formats.FORMATS, "tally", "tally_format:Tally")
    result = cli.invoke(app, ["verify", "constant_add", "--format", "tally"])
    sys.modules.pop("tally_format", None)
    assert result.exit_code == 1 and result.stdout == "constant_add=fail\n", result.output
    unknown = cli.invoke(app, ["verify", "constant_add", "--format", "xml"])
    assert unknown.exit_code == 2 and "no output format 'xml'" in unknown.output


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_the_cli_offers_writes_a_verdict(workspace, cli, name):
    """`--format` offers only formats a command can write: each one writes puzzle 1's verdict, no refusal."""
    result = cli.invoke(app, ["verify", "constant_add", "--solution", "--format", name])
    assert result.exit_code == 0, result.output
    assert "cannot show" not in result.output and result.output.strip()
