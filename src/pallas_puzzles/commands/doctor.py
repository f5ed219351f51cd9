"""`pallas-puzzles doctor`: what is installed, what works, and how to fix what does not."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pallas_puzzles import backends, versions
from pallas_puzzles.course.model import Course
from pallas_puzzles.errors import EXIT_FAIL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report import sentences


@dataclass(frozen=True)
class Line:
    item: str
    value: str
    ok: bool = True
    fix: str = ""


@dataclass
class Report:
    lines: list[Line] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return all(line.ok for line in self.lines)

    def add(self, item: str, value: str, ok: bool = True, fix: str = "") -> None:
        self.lines.append(Line(item, value, ok, fix))


def _watcher() -> tuple[str, bool, str]:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    with tempfile.TemporaryDirectory() as folder:
        observer = Observer()
        try:
            observer.schedule(FileSystemEventHandler(), folder, recursive=False)
            observer.start()
        except Exception as exc:
            return f"{type(observer).__name__} failed ({exc}); watch falls back to polling", True, ""
        observer.stop()
        observer.join(timeout=2)
    return type(observer).__name__, True, ""


def _course(report: Report) -> Course | None:
    """The course of the workspace here (the built-in one outside a workspace), with its version."""
    from pallas_puzzles.course.reader import load_course
    from pallas_puzzles.course.source import course_of
    from pallas_puzzles.workspace.folder import find_workspace

    try:
        try:
            workspace = find_workspace()
        except UserError:
            course = load_course()
        else:
            course = course_of(workspace)
        chapters = f"{len(course.chapters)} chapter{'s' if len(course.chapters) != 1 else ''}"
        report.add("course", f"{course.heading} ({course.name}; {chapters}, {sentences.course_size(course)}) "
                             f"in {course.folder}")
    except UserError as exc:
        report.add("course", "unusable", False, exc.message)
        return None
    return course


def _reach(report: Report, course: Course) -> None:
    """Which of the course's puzzles this jax can run, from the course's (and its targets') min_jax."""
    from pallas_puzzles.checking.support import beyond_this_jax
    from pallas_puzzles.report.sentences import puzzles_need

    beyond = beyond_this_jax(course.counted)
    if not beyond:
        report.add("puzzles", f"this jax runs all {len(course.counted)}")
        return
    reachable = len(course.counted) - sum(len(puzzles) for puzzles in beyond.values())
    needs = "; ".join(puzzles_need(puzzles, f"jax {needed} (Python {versions.python_for(needed)})")
                      for needed, puzzles in beyond.items())
    newest = max(beyond, key=versions.parse)
    # Not a fault of this install (every other puzzle runs), so not a problem: what to do for the rest.
    report.add("puzzles", f"this jax runs {reachable} of {len(course.counted)}: {needs}", True,
               f"For them, make a venv with Python {versions.python_for(newest)} or newer; pip then installs a "
               f"jax that has them.")


def diagnose_installation() -> Report:
    report = Report()
    python_ok = sys.version_info >= (3, 11)
    report.add("Python", sys.version.split()[0], python_ok, "" if python_ok else "Install Python 3.11 or newer.")
    report.add("pallas-puzzles", f"{versions.ours()} ({Path(__file__).resolve().parents[1]})")
    course = _course(report)
    backends.prepare_environment(backends.AUTO, backends.Mode.RUN)
    try:
        import jax
        import jaxlib
    except Exception as exc:  # a broken install is exactly what doctor is for
        report.add("jax", f"cannot be imported ({type(exc).__name__}: {exc})", False,
                   'Reinstall it: pip install -U "jax>=0.10.2" jaxlib')
        return report
    error, warning = backends.jax_version_verdict(jax.__version__)
    report.add("jax", jax.__version__, error is None, error or warning or "")
    if course is not None:
        _reach(report, course)
    report.add("jaxlib", jaxlib.__version__, jaxlib.__version__ == jax.__version__,
               "" if jaxlib.__version__ == jax.__version__ else "jax and jaxlib differ: pip install -U jax jaxlib")
    try:
        devices = ", ".join(sorted({f"{d.platform}:{d.device_kind}" for d in jax.devices()}))
        report.add("devices", devices)
        report.add("auto backend", backends.resolve(backends.AUTO).name)
    except Exception as exc:
        report.add("devices", f"JAX cannot list devices ({exc})", False, "Reinstall jax for your platform.")
    cache = backends.cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        report.add("compile cache", f"{cache} (safe to delete)")
    except OSError as exc:
        report.add("compile cache", f"{cache} is not writable ({exc})", False,
                   "Set PALLAS_PUZZLES_CACHE_DIR to a writable folder.")
    if hasattr(jax.sharding, "AbstractDevice"):
        report.add("TPU lowering check", "available (`pallas-puzzles lower N`)")
    else:
        report.add("TPU lowering check", "not available with this jax", True)
    watcher, ok, fix = _watcher()
    report.add("file watcher", watcher, ok, fix)
    try:
        from pallas_puzzles.workspace.folder import find_workspace

        report.add("workspace", str(find_workspace().root))
    except UserError:
        report.add("workspace", "none here (create one with `pallas-puzzles init DIR`)")
    return report


def cmd_doctor(out: Output) -> int:
    report = diagnose_installation()
    _render(out.console, report)
    return EXIT_PASS if report.healthy else EXIT_FAIL


def _render(console: Console, report: Report) -> None:
    table = Table(title="pallas-puzzles doctor", show_header=False)
    table.add_column("item", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")  # paths whole, never cut with "…"
    table.add_column("", no_wrap=True)
    for line in report.lines:
        mark = Text("ok", style="green") if line.ok else Text("problem", style="bold red")
        value = Text(line.value)
        if line.fix:
            value.append("\n→ " + line.fix, style="yellow")
        table.add_row(line.item, value, mark)
    console.print(table)
    if report.healthy:
        console.print(Text("Everything needed is in place.", style="green"))
    else:
        console.print(Text("Fix the problems above, then run `pallas-puzzles doctor` again.", style="bold red"))
