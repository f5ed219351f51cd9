"""Where a command's output goes, and in which format (the seam in `report.formats`)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console

from pallas_puzzles.report import formats, terminal
from pallas_puzzles.report.formats import Format, Rendered


@dataclass(frozen=True)
class Output:
    """Where a command's output goes, in which format: views on stdout; notices on stderr when
    the format writes one document (JSON), so stdout holds nothing else."""

    console: Console
    notices: Console
    format: Format

    @classmethod
    def make(cls, format_name: str = "terminal") -> Output:
        chosen = formats.get(format_name)
        console = terminal.make_console()
        return cls(console, terminal.make_console(stderr=True) if chosen.document else console, chosen)

    def write(self, rendered: Rendered) -> None:
        """Print what the format returned: text as it is, a rich renderable drawn."""
        if rendered is None:
            return
        if isinstance(rendered, str):
            self.console.file.write(rendered)
            self.console.file.flush()
        else:
            self.console.print(rendered)

    def info(self, message: str) -> None:
        terminal.info(self.notices, message)

    def warning(self, message: str) -> None:
        terminal.warning(self.notices, message)

    def error(self, message: str) -> None:
        terminal.error(self.notices, message)
        self.write(self.format.error(message))
