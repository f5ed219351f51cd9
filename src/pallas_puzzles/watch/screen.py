"""What watch mode shows, one screen at a time.

In a terminal each verdict replaces the screen before it (as rustlings does):
the header, the verdict, and the hint the learner last asked for on this
puzzle, so nothing they still need is cleared away. A pass gets a screen of
its own that stays until the learner presses a key or saves. Piped, nothing
is cleared: each screen is printed below the last.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.status import Status
from rich.text import Text

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report import perf_card, sentences, terminal, verdict_text
from pallas_puzzles.report.verdict_text import file_link
from pallas_puzzles.results import CheckResult
from pallas_puzzles.workspace.progress import HintReveal, PassOutcome, Progress


class Screen:
    def __init__(self, console: Console, progress: Progress, keys: bool) -> None:
        self.console = console
        self.progress = progress
        self.keys = keys
        self._hint: tuple[Puzzle, int] | None = None  # the hint level shown for a puzzle, kept on screen
        self._status: Status | None = None  # "still checking…", one line updated in place in a terminal

    @property
    def clears(self) -> bool:
        return self.console.is_terminal

    def _fresh(self) -> None:
        if self.clears:
            self.console.clear()

    def header(self, fresh: bool = True) -> None:
        """The current puzzle, its file, the progress bar and the keys (on a cleared screen)."""
        if fresh:
            self._fresh()
        terminal.render_watch_header(self.console, self.progress, self.keys)

    def verdict(self, result: CheckResult, puzzle: Puzzle) -> None:
        """A verdict that is not a pass: it replaces the previous one, under the header."""
        if self.clears:
            self.header()
        self.console.print(verdict_text.check(result, puzzle))
        if result.numbers_right:  # right numbers, over the budget: the card shows where the cost goes
            for card in perf_card.cards(result):
                self.console.print(card)
        if self._hint is not None and self._hint[0] == puzzle:
            terminal.render_hint(self.console, puzzle, self._hint[1])

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
        terminal.render_hint_reveal(self.console, puzzle, reveal)

    def success(self, result: CheckResult, puzzle: Puzzle, outcome: PassOutcome) -> None:
        """The pass, the performance card and where to go next; it stays until the learner acts."""
        self._fresh()
        self._hint = None
        shown: list[RenderableType] = [verdict_text.check(result, puzzle)]
        shown.extend(perf_card.cards(result))
        if not puzzle.tour:
            shown.append(self._success_box(puzzle, outcome))
        self.console.print(Group(*shown))

    def _success_box(self, puzzle: Puzzle, outcome: PassOutcome) -> Panel:
        lines = [Text(sentences.solved(puzzle), style="bold green")]
        if outcome.solution is not None:
            lines.append(Text("Compare with the reference solution: ") + file_link(outcome.solution))
        upcoming = outcome.upcoming
        if upcoming is not None:
            lines.append(Text(sentences.next_puzzle(upcoming)))
            how = "press n" if self.keys else "type n and Enter"
            lines.append(Text(f"When you are done looking, {how} to start it (or save any puzzle file).",
                              style="bold"))
        else:
            lines.append(Text(sentences.COURSE_FINISHED, style="bold"))
        lines.append(terminal.progress_bar(self.progress))
        return Panel(Group(*lines), border_style="green", title="✓ passed")
