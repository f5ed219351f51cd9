"""What the learner's code printed, laid out for a panel narrower than numpy's lines.

numpy wraps a long row of an array at 75 columns, and a debug print puts its label in front, so
inside an 80-column panel (76 wide) the panel would wrap numpy's pieces again and leave one
number to a line. Here each row's pieces are joined into one line again (the rows of a 2-D array,
which end in `]`, stay apart), and the panel's width wraps each line once, continuing under the
first bracket of its array.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from rich.console import Console, ConsoleOptions
from rich.text import Text


def rejoined(lines: list[str]) -> list[str]:
    """The lines, with each array row that numpy wrapped made one line again."""
    joined: list[str] = []
    depth = 0  # brackets open after the lines so far
    for line in lines:
        if _continues(joined[-1] if joined else "", line, depth):
            # numpy starts a row's next piece with a space per open bracket; the padding after it stays
            joined[-1] = f"{joined[-1].rstrip()} {line[depth:].rstrip()}"
        else:
            joined.append(line)
        depth = max(0, depth + line.count("[") - line.count("]"))
    return joined


def _continues(previous: str, line: str, depth: int) -> bool:
    """Is `line` the next piece of the row `previous` left open? numpy indents it by one space per open
    bracket; a new row (or a 2-D slice of a cube) starts with `[`, and a blank line separates slices."""
    rest = line.strip()
    return (depth > 0 and previous.strip() != "" and not previous.rstrip().endswith("]")
            and line[:depth] == " " * depth and rest != "" and not rest.startswith("["))


class PrintedLines:
    """Lines wrapped at the width they are rendered at, each continuing under its first `[`."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        width = max(options.max_width, 8)
        for line in self.lines:
            bracket = line.find("[")
            indent = " " * (bracket + 1) if 0 <= bracket < width // 2 else ""
            pieces = textwrap.wrap(line.expandtabs(), width, subsequent_indent=indent) or [""]
            for piece in pieces:
                yield Text(piece, no_wrap=True, overflow="fold")
