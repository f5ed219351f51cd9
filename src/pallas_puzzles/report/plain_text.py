"""A verdict as plain sentences, one per line: for documents other programs show (JUnit XML, results.json).

An autograder shows these as text, so nothing here is terminal layout: no boxes, no colour, no line
folded at a width or cut with "…". The content is the terminal's (`verdict_text`), in the words of
`sentences`; what the kernel printed is not part of it (each document has its own place for that).
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import sentences
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch, SourceLine, value_text


def _shown(path: Path) -> str:
    """The file as the terminal names it: relative to the current folder where it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _lines(where: tuple[SourceLine, ...]) -> list[str]:
    return [f"  {sentences.place(line.file, line.line)}: {line.text}" for line in where]


def _finding(found: Finding) -> list[str]:
    said = [found.message]
    where = sentences.finding_place(found)
    if where:
        said.append(f"({where})")
    said.extend(_lines(found.where))
    if found.explanation:
        said.append(found.explanation)
    if found.kind in (FindingKind.ERROR, FindingKind.IMPORT) and not found.where and found.detail:
        said.append(found.detail.strip().splitlines()[0])
    return said


def _mismatch(m: Mismatch, advise: bool) -> list[str]:
    said = [sentences.mismatch_counts(m) + ".", sentences.mismatch_scope(m)]
    said.extend(f"  {bad.index}: expected {value_text(bad.expected)}, got {value_text(bad.got, bad.fault)}"
                for bad in m.examples)
    legend = ", ".join(f'"{cell}" {label}' for cell, label in sentences.MAP_LEGEND)
    said.append(f"{sentences.block_map_heading(m)[:-1]} ({legend}):")
    said.extend(f"  {' '.join(row)}" for row in m.block_map)
    if m.origin():
        said.append(m.origin())
        said.extend(_lines(m.stored_at))
    if advise:
        said.append(m.kind.explanation)
    return said


def _case(case: CaseResult) -> list[str]:
    said = [sentences.case_outcome(case) + "."]
    for found in case.findings:
        said.extend(_finding(found))
    if case.mismatch is not None:
        said.extend(_mismatch(case.mismatch, not case.findings))
    return said


def verdict(result: CheckResult, puzzle: Puzzle) -> str:
    """What `verify` says of this result, as plain lines of text."""
    title = sentences.puzzle_title(puzzle)
    if result.passed:
        return f"✓ {title}: {sentences.pass_line(result)}\n"
    said = [f"✗ {title}", f"File: {_shown(Path(result.file))}"]
    if result.not_started:
        found = next(f for f in result.findings if f.kind is FindingKind.NOT_STARTED)
        said.extend([found.message, sentences.NOT_STARTED_TASK, *_lines(found.where)])
        return "\n".join(said) + "\n"
    for found in result.findings:
        said.extend(_finding(found))
    for case in result.cases:
        said.extend(_case(case))
    if result.skipped_cases:
        said.append(sentences.cases_not_run(result))
    said.append(f"Checked with {sentences.footer(result)}.")
    return "\n".join(said) + "\n"
