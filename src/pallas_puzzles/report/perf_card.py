"""The performance card: what a passing kernel costs on a TPU, by the cost model (pallas_puzzles.perf)."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pallas_puzzles.perf import chips
from pallas_puzzles.perf.figures import CallCost, Performance
from pallas_puzzles.perf.launcher import LauncherTraffic
from pallas_puzzles.perf.waste import kib
from pallas_puzzles.results import CheckResult


def card_case(result: CheckResult) -> Performance | None:
    """The case the card shows: the one that moves the most data (the most telling)."""
    figures = [c.performance for c in result.cases if c.performance is not None]
    return max(figures, key=lambda p: p.hbm_bytes_min, default=None)


def cards(result: CheckResult) -> list[Panel]:
    """The cards that follow a check whose numbers were right: the TPU pipeline's, for a kernel
    over several devices the traffic between them (report/traffic_card.py), for a GPU kernel the
    GPU card (report/gpu_card.py)."""
    from pallas_puzzles.report import gpu_card, traffic_card

    perf, traffic, gpu = card_case(result), traffic_card.traffic_case(result), gpu_card.gpu_case(result)
    return [*([card(perf)] if perf is not None else []), *([traffic_card.card(traffic)] if traffic is not None else []),
            *([gpu_card.card(gpu)] if gpu is not None else [])]


def line(result: CheckResult, puzzle_number: int) -> Text | None:
    """The card in one line, where the full card teaches nothing yet (before the efficiency chapter) or
    does not fit the screen; `perf N` shows the whole card."""
    perf = card_case(result)
    if perf is None:
        return None
    return Text.assemble((f"On a TPU {perf.chip} (model): ", "blue"),
                         f"HBM traffic {kib(perf.hbm_bytes)} ({perf.traffic_ratio:.1f}× the minimum), about "
                         f"{_seconds(perf.est_seconds)}, "
                         f"{perf.bound}-bound. ", (f"`pallas-puzzles perf {puzzle_number}` shows the card.", "dim"))


def _seconds(value: float) -> str:
    return f"{value * 1e6:.2f} µs" if value < 1e-3 else f"{value * 1e3:.2f} ms"


def _ratio_text(ratio: float | None) -> Text:
    if ratio is None:
        return Text("—", style="dim")
    style = "green" if ratio <= 1.0 + 1e-9 else "yellow" if ratio <= 2.0 else "bold red"
    return Text(f"{ratio:.1f}×", style=style)


def _call_table(call: CallCost, title: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, expand=False)
    for column in ("operand", "traffic", "of minimum", "VMEM", "why"):
        table.add_column(column, overflow="fold")
    for op in call.operands:
        if op.role == "scratch":
            table.add_row(op.name, "—", Text("—", style="dim"), kib(op.vmem_bytes), op.note)
            continue
        moved = "not counted" if op.hbm_bytes is None else f"{op.verb} {kib(op.hbm_bytes)}"
        table.add_row(op.name, moved, _ratio_text(op.ratio), kib(op.vmem_bytes) if op.vmem_bytes else "—", op.note)
    return table


def _launcher_table(launcher: LauncherTraffic) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title="Outside the pallas_calls: XLA operations in the launcher",
                  title_justify="left", pad_edge=False, expand=False)
    for column in ("line", "reads", "writes", "traffic"):
        table.add_column(column, overflow="fold")
    for step in launcher.steps:
        line = f"{step.line.line}: {step.line.text}" if step.line is not None else "?"
        table.add_row(line, ", ".join(dict.fromkeys(step.reads)) or "—", ", ".join(step.writes) or "—",
                      f"read {kib(step.read_bytes)}, written {kib(step.written_bytes)}")
    return table


def render_card(console: Console, perf: Performance) -> None:
    console.print(card(perf))


def card(perf: Performance) -> Panel:
    vmem_share = perf.vmem_bytes / perf.vmem_limit_bytes if perf.vmem_limit_bytes else 0.0
    head = Text.assemble(
        ("HBM traffic ", "bold"), f"{kib(perf.hbm_bytes)} (read {kib(perf.hbm_bytes_read)}, written "
        f"{kib(perf.hbm_bytes_written)}), ", _ratio_text(perf.traffic_ratio), f" the minimum {kib(perf.hbm_bytes_min)}",
    )
    lines: list[object] = [
        head,
        Text.assemble(("VMEM ", "bold"), f"{kib(perf.vmem_bytes)} of {kib(perf.vmem_limit_bytes)} "
                      f"({vmem_share:.0%} of the default limit)"),
        Text.assemble(("Compute ", "bold"), f"{perf.flops:,.0f} FLOPs, arithmetic intensity "
                      f"{perf.arithmetic_intensity:.2f} FLOP/byte"),
        Text.assemble(("Estimated time ", "bold"), f"{_seconds(perf.est_seconds)}, {perf.bound}-bound "
                      f"(memory {_seconds(perf.memory_seconds)}, compute {_seconds(perf.compute_seconds)}, "
                      f"{perf.grid_steps} grid step{'s' if perf.grid_steps != 1 else ''} "
                      f"{_seconds(perf.overhead_seconds)})"),
    ]
    many = len(perf.calls) > 1
    for n, call in enumerate(perf.calls, start=1):
        title = f"pallas_call {n}: {call.kernel}, grid {call.grid}" if many else f"{call.kernel}, grid {call.grid}"
        lines.append(_call_table(call, title))
    if perf.launcher is not None and perf.launcher.steps:
        lines.append(_launcher_table(perf.launcher))
    note = chips.CHIPS[perf.chip].note if perf.chip in chips.CHIPS else ""
    if note:
        lines.append(Text(note, style="dim"))
    if perf.waste:
        lines.append(Text.assemble(("Biggest waste: ", "bold yellow"), perf.waste))
    elif perf.hbm_bytes < perf.hbm_bytes_min:
        lines.append(Text("Less than the minimum: the kernel reads only part of some inputs (a gather), or some "
                          "operands are not counted.", style="green"))
    else:
        lines.append(Text("Every array crosses between HBM and VMEM once: no traffic to save.", style="green"))
    return Panel(Group(*lines), title=f"Performance on {perf.generation or 'a TPU ' + perf.chip} (model), "
                                      f"case {perf.case}",
                 subtitle="a TPU-pipeline model; on a GPU each program loads its blocks afresh",
                 border_style="blue", expand=True)
