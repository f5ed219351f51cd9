"""The Python API for notebooks and scripts: `import pallas_puzzles as pp`.

    pp.exercise(7)            the puzzle's text and the stub to start from
    pp.check(7, long_sum)     check a launcher function (or a file path); a CheckReport
                              (chip="v7x": the performance card for a TPU7x TensorCore)
    pp.show(7, long_sum)      the grid step-through, embedded in the notebook
    pp.hint(7)                the next hint (each call reveals one more)
    pp.list()                 the course as a table, with what passed in this session
    pp.solution(7)            the reference solution, once pp.check passed it (or with yes=True)

Checks run in this process (no workspace, no worker): JAX is imported on the
first call, not on `import pallas_puzzles`, and the checks let go of JAX's caches
once they have grown the process by engine/targets/memory.py's NOTEBOOK_GROWTH_MIB.
Results render as HTML in Jupyter and Colab and as rich text in a terminal.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions
from rich.text import Text

from pallas_puzzles import backends
from pallas_puzzles.backends import Mode
from pallas_puzzles.checking import support
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import UserError
from pallas_puzzles.results import CaseResult, CheckResult, Finding
from pallas_puzzles.workspace.progress import Progress

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.memory import CacheRelease
    from pallas_puzzles.engine.targets.process import Started
    from pallas_puzzles.perf.gpu_card import GpuCard

Launcher = Callable[..., Any] | str | Path
_ready: dict[tuple[str, str], Started] = {}
_release: CacheRelease | None = None  # when this process lets go of what JAX kept of the checks


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


def _colour_plain_text() -> bool:
    """Whether text/plain may carry colour: in a terminal IPython, yes; in a notebook's kernel, whose
    text/plain is read where no terminal draws it (nbconvert, an autograder, a diff), no."""
    import sys

    return bool(getattr(sys.stdout, "isatty", lambda: False)())


def _ansi(render: Callable[[Console], None], width: int = 100, color: bool = True) -> str:
    buffer = io.StringIO()
    # force_jupyter=False: inside Jupyter rich would otherwise display the panel itself (a second
    # output beside the HTML verdict) and leave this buffer empty.
    console = Console(file=buffer, width=width, force_terminal=color, color_system="truecolor" if color else None,
                      highlight=False, force_jupyter=False)
    render(console)
    return buffer.getvalue()


_session: list[Progress] = []


def _progress() -> Progress:
    """This session's progress (hints seen, puzzles passed): kept in memory, no workspace needed."""
    if not _session:
        import warnings

        _session.append(Progress.detached(load_course(), warn=lambda message: warnings.warn(message, stacklevel=3)))
    return _session[0]


def _place_in_notebook(file: str, line: int) -> str:
    """A cell's line as IPython names it in tracebacks ("Cell In[3], line 4"); else file:line."""
    import sys

    ipython = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    cells = getattr(getattr(ipython, "compile", None), "_filename_map", None) or {}
    if file in cells:  # IPython 8+: the cell's code name -> its execution count
        return f"Cell In[{cells[file]}], line {line}"
    return f"{file}:{line}"


def _cell_link(file: str) -> Text:
    """Where the checked code lives, as a notebook names it ("Cell In[3]"), not the kernel's temp file."""
    return Text(_place_in_notebook(file, 1).split(",")[0])


@dataclass
class CheckReport:
    """What `pp.check` returns: the verdict, as data and as a view."""

    result: CheckResult
    puzzle: Puzzle
    card: bool = False  # a chip was asked for: the text view ends with its performance card

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

    @property
    def gpu_card(self) -> GpuCard | None:
        """A GPU puzzle's card (what the kernel would cost on an NVIDIA GPU), for its busiest case."""
        from pallas_puzzles.report.gpu_card import gpu_case

        return gpu_case(self.result) if self.result.numbers_right else None

    def _render(self, console: Console) -> None:
        from pallas_puzzles.report import verdict_text

        console.print(verdict_text.check(self.result, self.puzzle, _place_in_notebook, _cell_link))
        self._render_cards(console)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield Text.from_ansi(_ansi(self._render, options.max_width, console.color_system is not None))

    def _repr_html_(self) -> str:
        import html

        from pallas_puzzles.report.formats import Verdict
        from pallas_puzzles.report.verdict_html import NotebookFormat

        verdict = NotebookFormat(_place_in_notebook).check(Verdict(self.puzzle, self.result))
        cards = _ansi(self._render_cards, color=False).rstrip()
        return verdict + (f"<pre class=\"pp-card\">{html.escape(cards)}</pre>" if cards else "")

    def _render_cards(self, console: Console) -> None:
        """The performance cards, when a chip was asked for and the numbers are right."""
        from pallas_puzzles.report import perf_card

        if self.card and self.result.numbers_right:
            for card in perf_card.cards(self.result):
                console.print(card)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(_ansi(self._render, color=_colour_plain_text()).rstrip())

    def __str__(self) -> str:
        return _ansi(self._render, color=False).rstrip()

    def __repr__(self) -> str:
        state = "passed" if self.passed else f"failed ({self.kind})"
        return f"<CheckReport puzzle {self.puzzle.number} {self.puzzle.name}: {state}, {len(self.cases)} case(s) run>"


def _run(puzzle: Puzzle, launcher: Launcher, backend: str, fail_fast: bool) -> CheckResult:
    """The check, then the memory rule: JAX keeps every check's programs, and a re-run cell is new code."""
    global _release
    result = _check(puzzle, launcher, backend, fail_fast)
    from pallas_puzzles.engine.targets.memory import CacheRelease

    _release = _release or CacheRelease.for_notebook()
    with contextlib.suppress(Exception):  # letting go of memory failed: the verdict stands
        _release.after_check()
    return result


def _check(puzzle: Puzzle, launcher: Launcher, backend: str, fail_fast: bool) -> CheckResult:
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


def check(puzzle: int | str, launcher: Launcher, backend: str = "auto", chip: str | None = None) -> CheckReport:
    """Check a launcher (the function that calls pl.pallas_call) or a file against a puzzle's spec;
    `chip` picks the chip the performance card models and shows it: a TPU generation ("v5e" unless given;
    "v7x": a TPU7x TensorCore) or, for GPU puzzles, an NVIDIA GPU ("h100" unless given)."""
    from pallas_puzzles.engine import targets
    from pallas_puzzles.perf import rechip

    chosen = _puzzle(puzzle)
    if chip:
        rechip.check_chip(chip, chosen.number, targets.get(chosen.target).gpu_card)
    result = _run(chosen, launcher, backend, fail_fast=True)
    if chip:
        result.cases = rechip.for_named_chip(result.cases, chip)
    report = CheckReport(result, chosen, card=chip is not None)
    if report.passed:
        _progress().record_pass(chosen)  # opens pp.solution for it, and pp.list shows it solved
    return report


@dataclass
class GridShow:
    """What `pp.show` returns: the step-through, embedded in a notebook or printed in a terminal."""

    page: str
    view: Any = field(repr=False)

    def _repr_html_(self) -> str:
        from pallas_puzzles.report.verdict_html import NotebookFormat

        return NotebookFormat().grid(self.view)

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
