"""The traffic card of a passing multi-device check: the bytes each device sent and received over the
links, against the least the collective needs (engine/targets/tpu_multichip/traffic.py has the figures)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from pallas_puzzles.results import CheckResult

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.tpu_multichip.traffic import RingTraffic


def traffic_case(result: CheckResult) -> RingTraffic | None:
    """The case the card shows: the one over the most devices."""
    figures = [c.traffic for c in result.cases if c.traffic is not None]
    return max(figures, key=lambda t: (t.devices, t.input_bytes), default=None)


def _size(n: int) -> str:
    return f"{n / 1024:g} KiB" if n >= 1024 else f"{n} bytes"


def card_lines(traffic: RingTraffic) -> list[str]:
    """Per device, then the busiest device against the minimum, with the rule that sets it."""
    lines = [f"device {d}: sent {_size(s)}, received {_size(r)}"
             for d, (s, r) in enumerate(zip(traffic.sent, traffic.received))]
    verdict = "the minimum" if abs(traffic.ratio - 1) < 1e-9 else f"{traffic.ratio:.2g}x the minimum"
    article = "an" if traffic.collective[0] in "aeiou" else "a"
    lines.append(f"The busiest device moves {verdict}: {article} {traffic.collective} needs at least "
                 f"{traffic.rule}, {_size(traffic.minimum)} here.")
    return lines


def card(traffic: RingTraffic) -> Panel:
    *devices, verdict = card_lines(traffic)
    style = "green" if traffic.ratio <= 1 + 1e-9 else "yellow"
    head = Text(f"{traffic.collective} over {traffic.devices} devices, {_size(traffic.input_bytes)} of input "
                f"on each", style="bold")
    body = Group(head, *(Text(line) for line in devices), Text(verdict, style=style))
    return Panel(body, title="Traffic between devices", expand=False)
