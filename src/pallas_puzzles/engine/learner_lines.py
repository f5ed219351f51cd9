"""Finding the learner's own lines: where a function was defined, the learner's frame
on the stack, and the learner's frames inside an exception and its causes.

Line texts come from `linecache`, which the checker seeds with the exact text it
ran for every check, so a long-lived worker never quotes an older version.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from pallas_puzzles.source_line import SourceLine


def make_line(filename: str, lineno: int, function: str = "") -> SourceLine:
    text = linecache.getline(filename, lineno).strip()
    return SourceLine(file=filename, line=lineno, text=text, function=function)


def read_source(path: Path) -> str:
    """A Python file's text as Python itself reads it: the encoding its byte-order mark or coding line
    (PEP 263) declares, else UTF-8, and universal newlines. UnicodeDecodeError where the bytes are not
    in that encoding; SyntaxError for a coding line Python does not know."""
    import importlib.util

    data = path.read_bytes()
    try:
        return importlib.util.decode_source(data)
    except SyntaxError:  # the first lines are no text to look for a coding line in: say where they stop being UTF-8
        data.decode("utf-8")
        raise


def remember_source(filename: str, text: str) -> None:
    """Make `make_line` quote exactly this text for `filename` (the version being checked)."""
    lines = text.splitlines(keepends=True)
    # mtime None: linecache.checkcache leaves the entry alone.
    linecache.cache[filename] = (len(text), None, lines, filename)


def source_of(fn: Any) -> SourceLine | None:
    """Where a function (kernel, index_map lambda) was defined."""
    try:
        fn = inspect.unwrap(fn)
        while isinstance(fn, functools.partial):
            fn = fn.func
        code = fn.__code__
    except (AttributeError, ValueError):
        return None
    return make_line(code.co_filename, code.co_firstlineno, code.co_name)


def same_file(a: str, b: str) -> bool:
    return a == b or _resolved(a) == _resolved(b)


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> str:
    """The file's real path, worked out once per process (a traceback names JAX's files over and over)."""
    try:
        return str(Path(path).resolve())
    except OSError:
        return path


def learner_call_site(learner_file: str) -> SourceLine | None:
    """The innermost frame of the learner's file on the current stack."""
    frame = sys._getframe(1)
    while frame is not None:
        if same_file(frame.f_code.co_filename, learner_file):
            return make_line(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def tracebacks(exc: BaseException) -> list[TracebackType]:
    """The tracebacks of an exception and of its causes and contexts."""
    seen: set[int] = set()
    out: list[TracebackType] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__traceback__ is not None:
            out.append(current.__traceback__)
        current = current.__cause__ or current.__context__
    return out


def learner_frames(exc: BaseException, learner_file: str) -> tuple[SourceLine, ...]:
    """The frames of the learner's file in an exception and its causes, outermost first."""
    lines: list[SourceLine] = []
    for tb in tracebacks(exc):
        for frame, lineno in traceback.walk_tb(tb):
            if same_file(frame.f_code.co_filename, learner_file):
                line = make_line(frame.f_code.co_filename, lineno, frame.f_code.co_name)
                if line not in lines:
                    lines.append(line)
    return tuple(lines)


def info_lines(info: Any, learner_file: str) -> tuple[SourceLine, ...]:
    """The learner's lines in a jax SourceInfo (where an operation was traced), in JAX's order."""
    lines: list[SourceLine] = []
    for f in getattr(getattr(info, "traceback", None), "frames", None) or ():
        name = getattr(f, "file_name", "")
        if same_file(name, learner_file):
            line = make_line(name, int(getattr(f, "line_num", 0)), getattr(f, "function_name", ""))
            if line not in lines:
                lines.append(line)
    return tuple(lines)


def recorded_lines(exc: BaseException, learner_file: str) -> tuple[SourceLine, ...]:
    """Learner lines that JAX recorded for the kernel operation that failed in the interpreter."""
    lines: list[SourceLine] = []
    for tb in tracebacks(exc):
        for frame, _ in traceback.walk_tb(tb):
            for line in info_lines(frame.f_locals.get("source_info"), learner_file):
                if line not in lines:
                    lines.append(line)
    return tuple(reversed(lines))
