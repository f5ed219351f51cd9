"""Exit codes and the error a command raises for bad input or set-up."""

from __future__ import annotations

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2  # bad input or set-up: one sentence says what to do
EXIT_INTERNAL = 3  # a fault in pallas-puzzles itself: one sentence and a log file
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """Bad input or set-up: shown as one sentence, exits with code 2."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
