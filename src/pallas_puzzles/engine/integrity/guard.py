"""Reads of the course's files by a learner's code while it is checked: refused, and a finding.

The course's specs and reference solutions, the checker's stored answers (spec-outputs) and a
workspace's stored verdicts are files on this machine. While a check runs the learner's code, an
audit hook (sys.addaudithook, once per process) watches every file the process opens and every
module it loads for the first time: when the learner's own line asked for one of those files, or
for a pallas_puzzles module, the open fails (PermissionError) and the check fails with a finding
naming that line. Opens made by JAX or the checker itself, even on the learner's behalf, are theirs.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

PACKAGE = Path(__file__).resolve().parents[2]  # src/pallas_puzzles
WORKSPACE_MARK = ".pallas_puzzles"  # a workspace's own folder: progress, backups, stored verdicts


@dataclass
class Watch:
    """The check in progress: whose code it runs, the files it may not read, what it tried."""

    learner_file: str
    roots: tuple[str, ...]
    found: list[Finding] = field(default_factory=list)
    busy: bool = False  # inside the hook (its own calls raise audit events too)


class _Slot:
    watch: Watch | None = None


_active = _Slot()
_installed = False


class _Library:
    """Code that opens files for its caller: the standard library, numpy, jax.numpy (jnp.load is np.load). An
    open made from there counts as the caller's; JAX's own opens (its compilation cache) are JAX's."""

    stdlib: tuple[str, ...] = ()
    numpy = ""

    @classmethod
    def find(cls) -> None:
        import numpy

        paths = sysconfig.get_paths()  # in a virtual environment platstdlib holds site-packages: not stdlib
        cls.stdlib = (*{os.path.join(paths[key], "") for key in ("stdlib", "platstdlib")}, "<frozen")
        cls.numpy = os.path.join(os.path.dirname(numpy.__file__), "")

    @classmethod
    def holds(cls, filename: str) -> bool:
        if filename.startswith(cls.numpy) or (f"{os.sep}jax{os.sep}" in filename and f"{os.sep}numpy{os.sep}"
                                              in filename):
            return True
        return filename.startswith(cls.stdlib) and not any(part in filename for part in _PACKAGES)


_PACKAGES = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def _asked_by_learner(watch: Watch) -> int | None:
    """The learner's line that asked for this open or import, when no other package's code stands between."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name == watch.learner_file:
            return frame.f_lineno
        if not _Library.holds(name):
            return None
        frame = frame.f_back
    return None


def _forbidden(watch: Watch, target: object) -> str | None:
    if not isinstance(target, (str, bytes, os.PathLike)):
        return None  # a file descriptor
    path = os.path.realpath(os.fsdecode(target))
    if WORKSPACE_MARK in Path(path).parts or path.startswith(watch.roots):
        return path
    return None


def _hook(event: str, args: tuple[object, ...]) -> None:
    watch = _active.watch
    if watch is None or watch.busy or event not in ("open", "import"):
        return
    watch.busy = True
    try:
        if event == "open":
            what = _forbidden(watch, args[0])
        else:
            module = str(args[0])
            what = module if module.split(".")[0] == "pallas_puzzles" else None
        line = _asked_by_learner(watch) if what is not None else None
    finally:
        watch.busy = False
    if line is None:
        return
    at = make_line(watch.learner_file, line)
    verb = "imports" if event == "import" else "reads"
    watch.found.append(Finding(
        FindingKind.REACHES_CHECKER, f"Line {line} {verb} {what}, part of the course or the checker (its specs, "
        "solutions, stored answers or verdicts). An exercise may not read them: the answer must come from your "
        "kernel.", where=(at,)))
    raise PermissionError(f"pallas-puzzles: an exercise may not read {what}")


def install() -> None:
    """Add the audit hook (once per process; it does nothing outside `watching`)."""
    global _installed
    if not _installed:
        _Library.find()
        sys.addaudithook(_hook)
        _installed = True


def roots(puzzle: Puzzle) -> tuple[str, ...]:
    """The folders a check's learner code may not read: this package (and the built-in course in it), the
    course's folder and reference solutions, and the specs' stored answers."""
    from pallas_puzzles import backends

    folders = [PACKAGE, puzzle.folder, puzzle.files / "solutions", backends.spec_outputs_dir()]
    return tuple(os.path.join(os.path.realpath(folder), "") for folder in folders)


@contextlib.contextmanager
def watching(puzzle: Puzzle | None, learner_file: str) -> Iterator[Watch]:
    """While the learner's code of one check runs: its reads of the course's files refused and recorded."""
    install()
    watch = Watch(learner_file, roots(puzzle) if puzzle is not None else (os.path.join(str(PACKAGE), ""),))
    previous, _active.watch = _active.watch, watch
    try:
        yield watch
    finally:
        _active.watch = previous
