"""What watch mode shows, one screen at a time.

In a terminal each verdict replaces the screen before it (as rustlings does):
the header, the verdict, and the hint the learner last asked for on this
puzzle, so nothing they still need is cleared away. Whatever is shown fits the
terminal: a verdict too tall for it is folded (`verdict_text.folds`), its title
and cause kept, and `d` shows the whole of it. A pass gets a screen of its own
that stays until the learner presses a key or saves. A notice about the
current puzzle's file (it is gone, it cannot be checked) replaces the screen
too, and is said once while nothing changes. Piped, nothing is cleared or
folded: each screen is printed below the last.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.status import Status
from rich.text import Text

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report import course_list, perf_card, sentences, terminal, verdict_text
from pallas_puzzles.report.verdict_text import FULL, Detail, file_link
from pallas_puzzles.results import CheckResult
from pallas_puzzles.workspace.progress import HintReveal, PassOutcome, Progress

Build = Callable[[Detail], RenderableType]  # a screen's body at a level of detail


class Screen:
    def __init__(self, console: Console, progress: Progress, keys: bool) -> None:
        self.console = console
        self.progress = progress
        self.keys = keys
        self._hint: tuple[Puzzle, int] | None = None  # the hint level shown for a puzzle, kept on screen
        self._status: Status | None = None  # "still checking…", one line updated in place in a terminal
        self._notice: tuple[str, str] | None = None  # the notice on screen now (puzzle, text), said once
        self._last: tuple[CheckResult, Puzzle, PassOutcome | None] | None = None  # for `d`: the verdict shown
        self._pending: list[str] = []  # warnings for the top of the next screen (one cleared now would hide them)
        progress.warn = self.warn

    @property
    def clears(self) -> bool:
        return self.console.is_terminal

    def _fresh(self) -> None:
        self._notice = None
        if self.clears:
            self.console.clear()

    def header(self, fresh: bool = True) -> None:
        """The current puzzle, its file, the progress bar and the keys (on a cleared screen), and the
        warnings said since the last screen."""
        if fresh:
            self._fresh()
        self.console.print(self._header())
        self._flush()

    def _header(self) -> RenderableType:
        return terminal.watch_header(self.progress, self.keys)

    def warn(self, text: str) -> None:
        """A warning about the session (progress that cannot be saved): said on the next screen, in a terminal,
        so that the screen drawn next does not clear it away (piped, at once)."""
        self._pending.append(text)
        if not self.clears:
            self._flush()

    def _flush(self) -> int:
        """Say the pending warnings; returns the lines they took."""
        said = 0
        for text in self._pending:
            line = Text("warning: ", style="bold yellow") + Text(text)
            said += self._height(line)
            self.console.print(line)
        self._pending.clear()
        return said

    # -- fitting the screen ---------------------------------------------------

    def _height(self, shown: RenderableType) -> int:
        return len(self.console.render_lines(shown, self.console.options, pad=False))

    def _fitted(self, build: Build, above: int) -> RenderableType:
        """The most detailed version of a screen's body that fits below `above` lines (in a terminal)."""
        if not self.clears:
            return build(FULL)
        room = self.console.height - above - 1  # the last line keeps the cursor (and "still checking…")
        said = "press d for the whole verdict" if self.keys else "type d and Enter for the whole verdict"
        versions = [build(detail) for detail in verdict_text.folds(said)]
        return next((shown for shown in versions if self._height(shown) <= room), versions[-1])

    def _cards(self, result: CheckResult, puzzle: Puzzle, detail: Detail) -> list[RenderableType]:
        """The performance card: whole from the chapter where it teaches (and when it fits), else one line."""
        if detail is FULL and self.progress.course.teaches_cost(puzzle):
            return list(perf_card.cards(result))
        line = perf_card.line(result, puzzle.number)
        return [line] if line is not None else []

    # -- screens --------------------------------------------------------------

    def verdict(self, result: CheckResult, puzzle: Puzzle) -> None:
        """A verdict that is not a pass: it replaces the previous one, under the header."""
        self._last = (result, puzzle, None)
        hint = self._hint[1] if self._hint is not None and self._hint[0] == puzzle else 0

        def build(detail: Detail) -> RenderableType:
            shown: list[RenderableType] = [verdict_text.check(result, puzzle, detail=detail)]
            if result.numbers_right:  # right numbers, over the budget: the card shows where the cost goes
                shown.extend(self._cards(result, puzzle, detail))
            if hint:
                shown.append(terminal.hint_panel(puzzle, hint))
            return Group(*shown)

        above = 0
        if self.clears:
            self._fresh()
            self.console.print(self._header())
            above = self._height(self._header()) + self._flush()
        else:
            self._flush()
        self.console.print(self._fitted(build, above))

    def success(self, result: CheckResult, puzzle: Puzzle, outcome: PassOutcome) -> None:
        """The pass, the performance card and where to go next; it stays until the learner acts."""
        self._fresh()
        self._hint = None
        self._last = (result, puzzle, outcome)

        def build(detail: Detail) -> RenderableType:
            shown: list[RenderableType] = [verdict_text.check(result, puzzle, detail=detail)]
            shown.extend(self._cards(result, puzzle, detail))
            shown.append(self._next_box(puzzle, outcome))
            return Group(*shown)

        above = self._flush()
        self.console.print(self._fitted(build, above))

    def details(self) -> None:
        """`d`: the whole of the last verdict, card included; when taller than the screen, its title and
        cause come again at the end, where the screen shows them."""
        if self._last is None:
            terminal.info(self.console, "No verdict yet: it comes with the first check.")
            return
        result, puzzle, outcome = self._last
        self._fresh()
        self._flush()
        shown: list[RenderableType] = [verdict_text.check(result, puzzle)]
        if result.numbers_right:
            shown.extend(perf_card.cards(result))
        if outcome is not None:
            shown.append(self._next_box(puzzle, outcome))
        whole = Group(*shown)
        self.console.print(whole)
        if self.clears and self._height(whole) >= self.console.height - 1:
            self.console.print(verdict_text.summary(result, puzzle))

    def listing(self) -> None:
        """`l`: the chapter of the current puzzle, whole, and a line per other chapter, on one screen."""
        self._fresh()
        above = self._flush()
        self.console.print(course_list.watch_view(self.progress, self.console.width, self.console.height - above))

    def notice(self, puzzle: Puzzle, text: str) -> None:
        """Something about the current puzzle's file that is not a verdict (it is gone, it cannot be
        checked): it replaces the screen, and is said once while it stays the same."""
        if self._notice == (puzzle.name, text):
            return
        if self.clears:
            self.header()
        terminal.warning(self.console, text)
        self._notice = (puzzle.name, text)

    def still_checking(self, text: str) -> None:
        """A slow check's notice: one transient line in a terminal, a new dim line when piped."""
        if not self.clears:
            self.console.print(text, style="dim")
        elif self._status is None:
            self._status = self.console.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def stop_notice(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def hint(self, puzzle: Puzzle, reveal: HintReveal) -> None:
        """The hints revealed so far; they stay below each new verdict of this puzzle."""
        if reveal.level:
            self._hint = (puzzle, reveal.level)
        self._notice = None
        self._flush()
        terminal.render_hint_reveal(self.console, puzzle, reveal)

    def _next_box(self, puzzle: Puzzle, outcome: PassOutcome) -> Panel:
        """Below a pass: solved (or, for the tour, what it is for), and where to go next."""
        how = "press n" if self.keys else "type n and Enter"
        if puzzle.tour:
            lines = [Text(f"This is the guided tour: read {puzzle.file} from the top. Change things in it and "
                          f"save to see what the checker says; it starts solved.", style="bold")]
            title = "the tour"
        else:
            lines = [Text(sentences.solved(puzzle), style="bold green")]
            if outcome.solution is not None:
                lines.append(Text("Compare with the reference solution: ") + file_link(outcome.solution))
            title = "✓ passed"
        upcoming = outcome.upcoming
        if upcoming is not None:
            lines.append(Text(sentences.next_puzzle(upcoming)))
            lines.append(Text(f"When you are done looking, {how} to start it (or save any puzzle file).",
                              style="bold"))
        else:
            lines.append(Text(sentences.COURSE_FINISHED, style="bold"))
        lines.append(course_list.progress_bar(self.progress))
        return Panel(Group(*lines), border_style="green", title=title)
