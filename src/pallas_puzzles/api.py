"""The Python API for notebooks and scripts: `import pallas_puzzles as pp`.

    pp.exercise(7)            the puzzle's text and the stub to start from
    pp.check(7, long_sum)     check a launcher function (or a file path); a CheckReport
    pp.show(7, long_sum)      the grid step-through, embedded in the notebook

Checks run in this process (no workspace, no worker): JAX is imported on the
first call, not on `import pallas_puzzles`. Results render as HTML in Jupyter
and Colab and as rich text in a terminal.
"""

from __future__ import annotations

import ast
import html
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions
from rich.text import Text

from pallas_puzzles import backends, support
from pallas_puzzles.backends import Mode
from pallas_puzzles.course_file import load_course
from pallas_puzzles.errors import UserError
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import CaseResult, CheckResult, Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.process import Started

Launcher = Callable[..., Any] | str | Path
_ready: dict[tuple[str, str], Started] = {}


def _started(puzzle: Puzzle, requested: str) -> Started:
    """Set this process up for the puzzle's target and start JAX, once per target and requested
    backend (auto picks a TPU on Colab)."""
    from pallas_puzzles.engine.targets import process

    key = (puzzle.target, backends.validate(requested))
    if key not in _ready:
        support.require(puzzle, None)
        _ready[key] = process.start(*key, Mode.RUN)
        if _ready[key].warning:
            import warnings

            warnings.warn(_ready[key].warning, stacklevel=4)
    return _ready[key]


def _puzzle(puzzle: int | str) -> Puzzle:
    return load_course().find(puzzle)


def _ansi(render: Callable[[Console], None], width: int = 100, color: bool = True) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="truecolor" if color else None,
                      highlight=False)
    render(console)
    return buffer.getvalue()


def _place_in_notebook(file: str, line: int) -> str:
    """A cell's line as IPython names it in tracebacks ("Cell In[3], line 4"); else file:line."""
    import sys

    ipython = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    cells = getattr(getattr(ipython, "compile", None), "_filename_map", None) or {}
    if file in cells:  # IPython 8+: the cell's code name -> its execution count
        return f"Cell In[{cells[file]}], line {line}"
    return f"{file}:{line}"


@dataclass
class CheckReport:
    """What `pp.check` returns: the verdict, as data and as a view."""

    result: CheckResult
    puzzle: Puzzle

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def cases(self) -> list[CaseResult]:
        return self.result.cases

    @property
    def findings(self) -> list[Finding]:
        """Everything found: about the code as a whole, then each shape case's."""
        return list(self.result.findings) + [f for case in self.result.cases for f in case.findings]

    @property
    def kind(self) -> str | None:
        """The first thing wrong, as its catalogue id (e.g. "oob-read"), or None on a pass."""
        kind = self.result.kind
        return kind.id if kind is not None else None

    def _render(self, console: Console) -> None:
        from pallas_puzzles.report import terminal

        terminal.render_result(console, self.result, self.puzzle)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield Text.from_ansi(_ansi(self._render, options.max_width, console.color_system is not None))

    def _repr_html_(self) -> str:
        from pallas_puzzles.report import verdict_html

        return verdict_html.render_check(self.result, self.puzzle, _place_in_notebook)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(_ansi(self._render).rstrip())

    def __str__(self) -> str:
        return _ansi(self._render, color=False).rstrip()

    def __repr__(self) -> str:
        state = "passed" if self.passed else f"failed ({self.kind})"
        return f"<CheckReport puzzle {self.puzzle.number} {self.puzzle.name}: {state}, {len(self.cases)} case(s) run>"


def _run(puzzle: Puzzle, launcher: Launcher, backend: str, fail_fast: bool) -> CheckResult:
    path = Path(launcher).expanduser() if isinstance(launcher, (str, Path)) else None
    if path is not None and not path.is_file():
        raise UserError(f"There is no file {path} to check.")
    if path is None and not callable(launcher):
        raise UserError(f"pp.check needs your launcher function (like {puzzle.entry}) or a file path; "
                        f"got {type(launcher).__name__}.")
    started = _started(puzzle, backend)
    support.require(puzzle, started.backend)
    if path is not None:
        from pallas_puzzles.engine.checker import check_puzzle

        return check_puzzle(puzzle, path.resolve(), started.backend, fail_fast=fail_fast, target=started.target)
    from pallas_puzzles.engine.checker import check_function

    return check_function(puzzle, launcher, started.backend, started.target, fail_fast=fail_fast)


def check(puzzle: int | str, launcher: Launcher, backend: str = "auto") -> CheckReport:
    """Check a launcher (the function that calls pl.pallas_call) or a file against a puzzle's spec."""
    chosen = _puzzle(puzzle)
    return CheckReport(_run(chosen, launcher, backend, fail_fast=True), chosen)


@dataclass
class GridShow:
    """What `pp.show` returns: the step-through, embedded in a notebook or printed in a terminal."""

    page: str
    view: Any = field(repr=False)

    def _repr_html_(self) -> str:
        # An iframe keeps the page's script and styles apart from the notebook's.
        return (f'<iframe srcdoc="{html.escape(self.page, quote=True)}" style="width:100%;height:560px;'
                f'border:1px solid #ddd" sandbox="allow-scripts"></iframe>')

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        from pallas_puzzles.report import stepper

        step = self.view.first_bad if self.view.first_bad is not None else 0
        yield stepper.render_frame(self.view, step)

    def save(self, path: str | Path) -> Path:
        """Write the page as one self-contained HTML file."""
        from pallas_puzzles.report.show import write_page

        return write_page(Path(path), self.view)


def show(puzzle: int | str, launcher: Launcher, case: int | None = None, backend: str = "auto") -> GridShow:
    """The grid step-through for a launcher: which block each grid step reads and writes."""
    from pallas_puzzles.report.show import page, view_of

    chosen = _puzzle(puzzle)
    result = _run(chosen, launcher, backend, fail_fast=case is None)
    view = view_of(result, chosen, case)
    return GridShow(page(view), view)


@dataclass(frozen=True)
class Exercise:
    """A puzzle to start from: its text (the teaching docstring) and the stub code."""

    number: int
    name: str
    title: str
    text: str
    stub: str

    def _repr_markdown_(self) -> str:
        return f"### Puzzle {self.number}: {self.title}\n\n{self.text}\n\n```python\n{self.stub}\n```\n"

    def __str__(self) -> str:
        return self.stub


def exercise(puzzle: int | str) -> Exercise:
    """The puzzle's text and the stub code to copy into a cell and complete."""
    chosen = _puzzle(puzzle)
    stub = chosen.stub_path.read_text(encoding="utf-8")
    text = ast.get_docstring(ast.parse(stub)) or ""
    return Exercise(chosen.number, chosen.name, chosen.title, text, stub)
