"""Where a command's output goes: its views on stdout, or one document for a program.

With a machine format (`--json`, `--format junit`, ...) stdout holds exactly one document and
notices go to stderr; a failure before the document says its sentence on stderr and, where the
format has one, prints that format's error document.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rich.console import Console

from pallas_puzzles.report import formats, json_view, terminal


@dataclass(frozen=True)
class Output:
    """Where a command's output goes: views on stdout; notices on stderr when stdout is JSON."""

    console: Console
    notices: Console
    form: str = formats.TEXT  # the output format: text, json, or (verify) junit or exercism

    @classmethod
    def make(cls, form: str = formats.TEXT) -> Output:
        console = terminal.make_console()
        return cls(console, terminal.make_console(stderr=True) if form != formats.TEXT else console, form)

    @property
    def as_json(self) -> bool:
        return self.form == formats.JSON

    @property
    def machine(self) -> bool:
        """stdout holds one document for a program; the terminal views stay off it."""
        return self.form != formats.TEXT

    def info(self, message: str) -> None:
        terminal.info(self.notices, message)

    def warning(self, message: str) -> None:
        terminal.warning(self.notices, message)

    def error(self, message: str) -> None:
        terminal.error(self.notices, message)
        if self.as_json:
            json_view.emit(json_view.error_document(message))
        elif self.form in formats.ERROR_DOCUMENTS:
            sys.stdout.write(formats.ERROR_DOCUMENTS[self.form](message))
            sys.stdout.flush()
