"""The notebook API's course side: `pp.exercise`, `pp.hint`, `pp.list` and `pp.solution`.

They read the course and this session's progress (`api._progress`: hints seen,
puzzles passed by `pp.check`), with the same rules as the command line: a hint
at a time, and the reference solution once the puzzle is passed or when asked
for with `yes=True` (the CLI's `--yes`). Each returns an object that renders as
HTML or Markdown in Jupyter and Colab and as text in a terminal.
"""

from __future__ import annotations

import ast
import html
from dataclasses import dataclass

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.notebook.api import _progress, _puzzle
from pallas_puzzles.workspace.folder import reference_solution


def _without_docstring(code: str) -> str:
    """The code after the module docstring: the docstring is shown once, as text."""
    tree = ast.parse(code)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
            and isinstance(first.value.value, str) and first.end_lineno is not None:
        return "\n".join(code.splitlines()[first.end_lineno:]).strip("\n") + "\n"
    return code


@dataclass(frozen=True)
class Exercise:
    """A puzzle to start from: its text (the teaching docstring) and the stub code."""

    number: int
    name: str
    title: str
    text: str
    stub: str  # the whole file, docstring included: what a learner copies

    @property
    def code(self) -> str:
        return _without_docstring(self.stub)

    def _repr_markdown_(self) -> str:
        return f"### Puzzle {self.number}: {self.title}\n\n{self.text}\n\n```python\n{self.code}```\n"

    def __str__(self) -> str:
        return self.stub


def exercise(puzzle: int | str) -> Exercise:
    """The puzzle's text and the stub code to copy into a cell and complete."""
    chosen = _puzzle(puzzle)
    stub = chosen.stub_path.read_text(encoding="utf-8")
    text = ast.get_docstring(ast.parse(stub)) or ""
    return Exercise(chosen.number, chosen.name, chosen.title, text, stub)


@dataclass(frozen=True)
class Hints:
    """The hints revealed so far for one puzzle, and what to do next."""

    puzzle: Puzzle
    level: int
    note: str

    @property
    def shown(self) -> tuple[str, ...]:
        return self.puzzle.hints[: self.level]

    def _repr_html_(self) -> str:
        total = len(self.puzzle.hints)
        items = "".join(f"<li>{html.escape(h)}</li>" for h in self.shown)
        return (f"<div style='border-left:4px solid #1f77b4;padding:4px 12px'><b>Puzzle {self.puzzle.number}: "
                f"{html.escape(self.puzzle.title)}</b> · hints {self.level}/{total}<ol>{items}</ol>"
                f"<p style='color:#666'>{html.escape(self.note)}</p></div>")

    def __str__(self) -> str:
        total = len(self.puzzle.hints)
        lines = [f"Hint {n}/{total}: {h}" for n, h in enumerate(self.shown, start=1)]
        return "\n".join([*lines, self.note])

    def __repr__(self) -> str:
        return str(self)


def hint(puzzle: int | str) -> Hints:
    """The next hint for a puzzle; each call reveals one more, like `pallas-puzzles hint`."""
    chosen = _puzzle(puzzle)
    reveal = _progress().reveal_hint(chosen)
    total = len(chosen.hints)
    if reveal.level == 0:
        note = f"Puzzle {chosen.number} has no hints."
    elif reveal.level < total:
        note = f"Call pp.hint({chosen.number}) again for hint {reveal.level + 1}."
    else:
        note = (f"That was the last hint{' (all shown again)' if reveal.exhausted else ''}. "
                f"pp.solution({chosen.number}) shows the reference solution once pp.check has passed it.")
    return Hints(chosen, reveal.level, note)


@dataclass(frozen=True)
class Course:
    """What `pp.list()` returns: the course as a table."""

    def _repr_html_(self) -> str:
        from pallas_puzzles.report.verdict_html import NotebookFormat

        return NotebookFormat().listing(_progress())

    def __str__(self) -> str:
        from pallas_puzzles.notebook.api import _ansi
        from pallas_puzzles.report import terminal

        return _ansi(lambda console: terminal.render_list(console, _progress()), color=False).rstrip()

    def __repr__(self) -> str:
        return str(self)


def list_puzzles() -> Course:
    """Every puzzle: number, title, name, whether pp.check passed it here, backends, hints."""
    return Course()


@dataclass(frozen=True)
class Solution:
    """The reference solution, or why it is held back."""

    puzzle: Puzzle
    code: str | None  # None: withheld by the spoiler rule

    @property
    def note(self) -> str:
        return (f"Puzzle {self.puzzle.number} has not passed pp.check in this session yet. "
                f"pp.solution({self.puzzle.number}, yes=True) shows it anyway; "
                f"pp.hint({self.puzzle.number}) may help first.")

    def _repr_markdown_(self) -> str:
        if self.code is None:
            return self.note
        return (f"### Puzzle {self.puzzle.number}: {self.puzzle.title} (reference solution)\n\n"
                f"```python\n{self.code}```\n")

    def __str__(self) -> str:
        return self.code if self.code is not None else self.note

    def __repr__(self) -> str:
        return str(self)


def solution(puzzle: int | str, yes: bool = False) -> Solution:
    """The reference solution: after pp.check passed the puzzle here, or with yes=True (the CLI asks first)."""
    chosen = _puzzle(puzzle)
    if not (yes or chosen.tour or _progress().is_solved(chosen)):
        return Solution(chosen, None)
    return Solution(chosen, reference_solution(chosen).read_text(encoding="utf-8"))
