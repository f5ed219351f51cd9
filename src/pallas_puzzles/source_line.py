"""A line of the learner's code: what findings, launcher traffic and the cost card point at.

Its own module because everything that names a place imports it, results and the cost
model's figures alike, and neither may import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLine:
    """A line of the learner's code that a finding points at."""

    file: str
    line: int
    text: str
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"
