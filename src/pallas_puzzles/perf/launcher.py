"""What a launcher moves through HBM outside its pallas_calls (the XLA operations around them),
as plain data for the cost model, the card and the budget (engine/launcher_traffic.py measures it)."""

from __future__ import annotations

from dataclasses import dataclass

from pallas_puzzles.source_line import SourceLine


@dataclass(frozen=True)
class XlaStep:
    """The XLA operations of one launcher line, and what they move through HBM."""

    line: SourceLine | None
    read_bytes: int
    written_bytes: int
    reads: tuple[str, ...] = ()  # what they read from HBM: "x", "the output of pallas_call 1 (scale)"
    writes: tuple[str, ...] = ()  # what they write to HBM: "a (50, 96) float32 array that pallas_call 2 reads"

    @property
    def hbm_bytes(self) -> int:
        return self.read_bytes + self.written_bytes


@dataclass(frozen=True)
class LauncherTraffic:
    """Every launcher line whose XLA operations move data through HBM (fused as well as XLA could)."""

    steps: tuple[XlaStep, ...] = ()

    @property
    def read_bytes(self) -> int:
        return sum(s.read_bytes for s in self.steps)

    @property
    def written_bytes(self) -> int:
        return sum(s.written_bytes for s in self.steps)

    @property
    def hbm_bytes(self) -> int:
        return self.read_bytes + self.written_bytes

    @property
    def biggest(self) -> XlaStep | None:
        return max(self.steps, key=lambda s: s.hbm_bytes, default=None)
