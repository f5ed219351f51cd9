"""A check's verdict in one line, and the learner line it names: for dev check, JUnit and results.json.

Built from the result's data (the first finding, or the first failed case's mismatch), never
from the text of another view.
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import sentences
from pallas_puzzles.results import CheckResult, Finding
from pallas_puzzles.source_line import SourceLine


def first_finding(result: CheckResult) -> Finding | None:
    """The finding the verdict is about (the one `result.kind` names), if it is a finding."""
    if result.finding is not None:
        return result.finding
    if result.not_started and not result.passed:
        return next(f for f in result.findings if f.kind is FindingKind.NOT_STARTED)
    case = result.first_failure
    return case.finding if case is not None else None


def first_line(result: CheckResult) -> SourceLine | None:
    """The first learner line the verdict names, if any."""
    finding = first_finding(result)
    if finding is not None and finding.where:
        return finding.where[0]
    case = result.first_failure
    if case is not None and case.mismatch is not None and case.mismatch.stored_at:
        return case.mismatch.stored_at[0]
    return None


def message(result: CheckResult) -> str:
    """What went wrong, in the checker's words: the finding's message, or the mismatch's counts."""
    if result.passed:
        return f"passed {len(result.cases)} shape cases"
    finding = first_finding(result)
    if finding is not None:
        return finding.message
    case = result.first_failure
    if case is not None and case.mismatch is not None:
        return f"shape case {case.label}: {sentences.mismatch_counts(case.mismatch)}"
    return "failed"


def headline(result: CheckResult) -> str:
    """"oob-read at 02_constant_add_blocked.py:34: Out-of-bounds read at grid point (1,): ..."."""
    kind = result.kind.id if result.kind is not None else ("pass" if result.passed else "fail")
    line = first_line(result)
    where = f" at {Path(line.file).name}:{line.line}" if line is not None else ""
    return f"{kind}{where}: {message(result)}"
