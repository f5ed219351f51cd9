"""JUnit XML: one test case per puzzle, for the test reporters of GitLab, Jenkins and GitHub Actions.

The document keeps to the strictest common form of the format (Ant's JUnit task and Jenkins'
xunit schema): `<testsuites>` holds one `<testsuite>` with every attribute both require, its
`<properties>` first and its `<system-out>`/`<system-err>` last; each `<testcase>` has a name, a
class name and a time, and at most one `<failure>`, `<error>` or `<skipped>`. A failure's
`message` is the verdict's first line (finding kind, learner line, what happened), its `type` the
finding kind, and its text the verdict in plain sentences (report/plain_text.py).
tests/e2e/test_autograders.py validates the output against an XSD of those rules.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET

from pallas_puzzles import versions
from pallas_puzzles.checking.jobs import Outcome, RunReport
from pallas_puzzles.course.model import Course
from pallas_puzzles.report.formats import AutograderFormat
from pallas_puzzles.report.headline import headline
from pallas_puzzles.report.plain_text import verdict
from pallas_puzzles.results import Status

# Characters XML 1.0 cannot hold (control characters other than tab and newlines); a learner's
# print() may produce them, e.g. a terminal colour escape.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def _case(suite: ET.Element, course: Course, outcome: Outcome) -> None:
    puzzle, result = outcome.puzzle, outcome.result
    chapter = course.chapter_of(puzzle)
    case = ET.SubElement(suite, "testcase", name=f"{puzzle.number:02d} {puzzle.name}",
                         classname=f"{course.name}.{chapter.name}",
                         time=_seconds(result.seconds if result is not None else 0.0))
    if result is None:
        ET.SubElement(case, "skipped", message=_text(outcome.refusal.sentence if outcome.refusal else ""))
        return
    if not result.passed:
        tag = "error" if result.status is Status.ERROR else "failure"
        kind = result.kind.id if result.kind is not None else "fail"
        failure = ET.SubElement(case, tag, message=_text(headline(result)), type=kind)
        failure.text = _text(verdict(result, puzzle))
    if result.printed:
        ET.SubElement(case, "system-out").text = _text(result.printed)


def render(report: RunReport) -> str:
    """The JUnit XML document of a run."""
    course = report.course
    assert course is not None, "a verify run records its course"
    failures, errors = report.count(Status.FAIL), report.count(Status.ERROR)
    tests, total = str(len(report.outcomes)), _seconds(report.seconds)
    root = ET.Element("testsuites", name=course.title, tests=tests, failures=str(failures),
                      errors=str(errors), time=total)
    suite = ET.SubElement(root, "testsuite", name=course.name, tests=tests, failures=str(failures),
                          errors=str(errors), skipped=str(len(report.refused)), time=total,
                          timestamp=report.started.strftime("%Y-%m-%dT%H:%M:%S"),
                          hostname=_text(socket.gethostname() or "localhost"), id="0",
                          package=course.name)
    properties = ET.SubElement(suite, "properties")
    for name, value in (("course", course.name), ("course.title", course.title),
                        ("course.version", course.version), ("backend", report.backend),
                        ("pallas-puzzles", versions.ours()), ("jax", versions.installed_jax() or "not installed")):
        ET.SubElement(properties, "property", name=name, value=_text(value))
    for outcome in report.outcomes:
        _case(suite, course, outcome)
    ET.SubElement(suite, "system-out")
    ET.SubElement(suite, "system-err")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


class JunitFormat(AutograderFormat):
    """`--format junit`: one JUnit XML document on stdout once the run is over."""

    name = "junit"

    def render(self, report: RunReport) -> str:
        return render(report)
