"""Errors that end a command with one clear sentence instead of a traceback."""

from __future__ import annotations

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


class UserError(Exception):
    """Bad input or set-up: shown as one sentence, exits with code 2."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
