"""Bytes each device sends and receives over the links, against what the collective needs at least.

The interpreter has no clock, but it knows every remote copy: its source and
target device and its bytes. For a collective over N devices, where S is the
bytes of one device's input, each device must at least receive (and, in a
ring, send):

- permute (my block to one neighbour): S;
- exchange (my block to both neighbours): 2 S;
- all-gather: (N-1) S, that is (N-1)/N of the gathered result;
- reduce-scatter: (N-1)/N S (every other device's part of my input must leave);
- all-reduce: 2 (N-1)/N S (a reduce-scatter, then an all-gather of the sums).

No jax here; report/traffic_card.py draws the card from these figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

# name -> (the minimum as a multiple of S for N devices, the rule in words)
COLLECTIVES: dict[str, tuple[Callable[[int], Fraction], str]] = {
    "permute": (lambda n: Fraction(1), "one block per device"),
    "exchange": (lambda n: Fraction(2), "one block to each neighbour"),
    "all-gather": (lambda n: Fraction(n - 1), "(N-1)/N of the gathered result per device"),
    "reduce-scatter": (lambda n: Fraction(n - 1, n), "(N-1)/N of each device's input"),
    "all-reduce": (lambda n: Fraction(2 * (n - 1), n), "2 (N-1)/N of each device's input "
                   "(a reduce-scatter, then an all-gather)"),
}


@dataclass(frozen=True)
class RingTraffic:
    """What one shape case moved between devices."""

    collective: str
    devices: int
    input_bytes: int  # S: one device's share of the first input
    sent: tuple[int, ...]  # per device
    received: tuple[int, ...]
    minimum: int  # bytes each device must at least receive

    @property
    def rule(self) -> str:
        return COLLECTIVES[self.collective][1]

    @property
    def ratio(self) -> float:
        busiest = max((*self.sent, *self.received), default=0)
        return busiest / self.minimum if self.minimum else 0.0


def measure(collective: str, devices: int, input_bytes: int, sent: Sequence[int],
            received: Sequence[int]) -> RingTraffic:
    need, _ = COLLECTIVES[collective]
    return RingTraffic(collective, devices, input_bytes, tuple(sent), tuple(received),
                       int(need(devices) * input_bytes))
