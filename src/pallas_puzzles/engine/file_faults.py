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
    if not exc.lineno:  # about the whole file (a coding line naming no encoding Python knows)
        return Finding(FindingKind.SYNTAX, f"Python cannot read your file: {exc.msg}.",
                       explanation="A coding line (`# -*- coding: NAME -*-`) in the first two lines must name an "
                                   "encoding Python knows; without one the file is read as UTF-8.")
    line = exc.lineno
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


def encoding_finding(exc: UnicodeDecodeError) -> Finding:
    """Bytes Python cannot read as the file's encoding (UTF-8 unless a coding line says otherwise)."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw[: exc.start].count(b"\n") + 1
    encoding = "UTF-8" if exc.encoding.lower().replace("_", "-") in ("utf-8", "utf8") else exc.encoding
    byte = f"byte 0x{raw[exc.start]:02x}" if exc.start < len(raw) else "a byte"
    return Finding(
        FindingKind.SYNTAX, f"Python cannot read your file: {byte} is not {encoding} (line {line}).",
        explanation="Python reads a source file as UTF-8 unless its first or second line declares another "
                    "encoding (`# -*- coding: latin-1 -*-`). Save the file as UTF-8 in your editor.",
        detail=str(exc))


def import_finding(exc: BaseException, learner_file: str) -> Finding:
    text = str(exc)
    where = learner_frames(exc, learner_file)
    named = f"{type(exc).__name__}: {text}" if text else type(exc).__name__  # MemoryError() says nothing more
    said = plain_message(named, where) or (f"{type(exc).__name__}: {first_line(text)}" if text else named)
    return Finding(
        FindingKind.IMPORT, f"Your file failed while being imported: {said}",
        explanation=plain_meaning(text), where=where, detail=text,
    )


_EXIT_MEANING = ("The checker imports your file and calls your launcher itself, in its own process: sys.exit(), "
                 "exit() and `raise SystemExit` there end its work, not a script of yours. Keep code that should "
                 "run only when you run the file yourself under `if __name__ == \"__main__\":`, as the exercise's "
                 "last lines are.")


def exit_finding(exc: SystemExit, learner_file: str, importing: bool) -> Finding:
    """The learner's code raised SystemExit (sys.exit, exit()) while imported or while a case ran."""
    where = learner_frames(exc, learner_file)
    when = "while being imported" if importing else "while the checker ran it"
    return Finding(FindingKind.IMPORT if importing else FindingKind.ERROR,
                   f"Your file raised SystemExit({'' if exc.code is None else repr(exc.code)}) {when}.",
                   explanation=_EXIT_MEANING, where=where)
