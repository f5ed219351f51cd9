"""A learner file that Python cannot read or import, as a finding: the one fault every target meets first."""

from __future__ import annotations

from pallas_puzzles.engine.learner_lines import learner_frames
from pallas_puzzles.engine.meanings import plain_meaning, plain_message
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


def first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def syntax_finding(exc: SyntaxError, learner_file: str) -> Finding:
    line = exc.lineno or 0
    text = (exc.text or "").rstrip("\n")
    caret = ""
    if exc.offset and text:
        caret = " " * (exc.offset - 1 - (len(text) - len(text.lstrip()))) + "^"
    where = (SourceLine(file=exc.filename or learner_file, line=line, text=text.strip(), function=""),)
    return Finding(
        FindingKind.SYNTAX,
        f"Python cannot read your file: {exc.msg} (line {line}).",
        where=where, detail=caret,
    )


def import_finding(exc: BaseException, learner_file: str) -> Finding:
    text = str(exc)
    where = learner_frames(exc, learner_file)
    said = plain_message(f"{type(exc).__name__}: {text}", where) or f"{type(exc).__name__}: {first_line(text)}"
    return Finding(
        FindingKind.IMPORT, f"Your file failed while being imported: {said}",
        explanation=plain_meaning(text), where=where, detail=text,
    )
