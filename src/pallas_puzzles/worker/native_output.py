"""What native code prints in a checker process, read into the check's printed text.

A kernel's printf on a GPU comes from the CUDA driver, on the process's file descriptor 1, not
through Python's sys.stdout: seen on an H100 (issue 35), the tour's pl.debug_print gave some 9,856
lines, one per thread, straight onto the learner's terminal, under watch's screen and outside the
panel of what their code printed. So a checker's descriptor 1 is a spool file: after each check
what landed there joins the check's printed text, its first lines kept.
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
from typing import IO

KEPT_LINES = 200  # a GPU prints once per thread: the first lines say what the rest repeat


class NativeOutput:
    """Descriptor 1 of this process, spooled to a file between `clear` and `taken`."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._spool: IO[bytes] = tempfile.TemporaryFile()
        os.dup2(self._spool.fileno(), 1)
        try:
            self._libc: ctypes.CDLL | None = ctypes.CDLL(None)
        except OSError:  # no C library to flush (not Linux or macOS): what it buffers arrives later
            self._libc = None

    def clear(self) -> None:
        self._spool.seek(0)
        self._spool.truncate()

    def taken(self) -> str:
        """What was printed since `clear`, at most KEPT_LINES lines and a line that counts the rest."""
        sys.stdout.flush()
        if self._libc is not None:
            self._libc.fflush(None)  # C's stdout is fully buffered on a file
        self._spool.seek(0)
        lines = self._spool.read().decode("utf-8", errors="replace").splitlines()
        self.clear()
        if len(lines) > KEPT_LINES:
            lines = lines[:KEPT_LINES] + [f"… and {len(lines) - KEPT_LINES} more lines"]
        return "".join(f"{line}\n" for line in lines)
