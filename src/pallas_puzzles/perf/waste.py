"""Why a kernel moves more than the minimum: the sentences the card and the budget finding use."""

from __future__ import annotations

from pallas_puzzles.perf.figures import CallCost, OperandCost, Waste
from pallas_puzzles.perf.launcher import LauncherTraffic
from pallas_puzzles.results import CallLayout, OperandLayout


def _axes_used(operand: OperandLayout, points: list[tuple[int, ...]]) -> set[int]:
    """Grid axes the operand's block index depends on."""
    assert operand.block_indices is not None
    where = {point: index for point, index in zip(points, operand.block_indices)}
    used = set()
    for point, index in where.items():
        for axis, value in enumerate(point):
            if axis not in used and value > 0:
                previous = point[:axis] + (value - 1,) + point[axis + 1:]
                if where[previous] != index:
                    used.add(axis)
    return used


def refetch_note(operand: OperandLayout, grid: tuple[int, ...], copies: int, distinct: int) -> tuple[str, str]:
    """Why an operand's blocks are copied more than once each: (a few words, a full clause)."""
    if copies <= distinct or not grid:
        return "", ""
    used = _axes_used(operand, [tuple(p) for p in _points(grid)])
    inner = max(used, default=-1)
    outer_ignored = [axis for axis in range(len(grid)) if axis not in used and axis < inner and grid[axis] > 1]
    if not outer_ignored:
        return (f"{distinct} blocks, {copies} copies",
                f"its {distinct} blocks are copied {copies} times in all: the grid comes back to blocks it left")
    axis = outer_ignored[0]
    return (f"re-fetched on each of the {grid[axis]} steps of grid axis {axis}",
            f"its index_map ignores grid axis {axis}, yet that axis runs outside axis {inner}, which it uses, so "
            f"each of the {grid[axis]} steps of axis {axis} fetches the same blocks again")


def _points(grid: tuple[int, ...]) -> list[tuple[int, ...]]:
    return CallLayout(kernel="", grid=grid, semantics=(), operands=()).grid_points()


def _round_trips(calls: tuple[CallCost, ...]) -> Waste | None:
    """An array one call writes and a later call reads back: a trip through HBM that fusion saves."""
    for n, first in enumerate(calls):
        for out in first.operands:
            if out.role != "output":
                continue
            for m, later in enumerate(calls[n + 1:], start=n + 2):
                for inp in later.operands:
                    if inp.role == "input" and (inp.shape, inp.dtype) == (out.shape, out.dtype):
                        return Waste(f"{out.name} makes a round trip through HBM: pallas_call {n + 1} "
                                     f"({first.kernel}) writes it and pallas_call {m} ({later.kernel}) reads it "
                                     f"back as {inp.name}; one fused kernel would keep it in VMEM", out.name)
    return None


def _rereads(calls: tuple[CallCost, ...]) -> Waste | None:
    """An input array that more than one call reads from HBM (arrays matched by shape and dtype)."""
    made: set[tuple[tuple[int, ...], str]] = set()
    readers: dict[tuple[tuple[int, ...], str], list[tuple[int, CallCost, OperandCost]]] = {}
    for n, call in enumerate(calls, start=1):
        for op in call.operands:
            key = (op.shape, op.dtype)
            if op.role == "input" and key not in made and op.hbm_bytes:
                readers.setdefault(key, []).append((n, call, op))
        made |= {(op.shape, op.dtype) for op in call.operands if op.role == "output"}
    many = [group for group in readers.values() if len({n for n, _, _ in group}) > 1]
    if not many:
        return None
    group = max(many, key=lambda g: sum(op.hbm_bytes or 0 for _, _, op in g))
    n, _, first = group[0]
    calls_text = ", ".join(f"{m} ({call.kernel})" for m, call, _ in group)
    return Waste(f"{first.name} is read from HBM by {len(group)} pallas_calls ({calls_text}); one kernel that "
                 f"computes everything from the block it holds would read it once", first.name)


def kib(n: float) -> str:
    """Bytes in the unit that reads best."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def launcher_waste(launcher: LauncherTraffic) -> str:
    """The launcher line whose XLA operations move the most, as one clause."""
    step = launcher.biggest
    if step is None:
        return ""
    where = f"line {step.line.line} ({step.line.text})" if step.line is not None else "the launcher"
    moves = [f"reads {' and '.join(dict.fromkeys(step.reads))}" if step.reads else "",
             f"writes {' and '.join(step.writes)}" if step.writes else ""]
    return (f"{where} runs in XLA, outside the pallas_calls: it {' and '.join(m for m in moves if m)} "
            f"({kib(step.hbm_bytes)} through HBM); do that work inside the kernel, on the blocks it already holds")


def biggest_waste(perf_calls: tuple[CallCost, ...], operands: tuple[OperandCost, ...], total: int,
                  minimum: int, launcher: LauncherTraffic | None = None) -> Waste:
    if total <= minimum:
        return Waste()
    outside = launcher.hbm_bytes if launcher is not None else 0
    trip = (_rereads(perf_calls) or _round_trips(perf_calls)) if len(perf_calls) > 1 else None
    worst = max((op for op in operands if op.ratio is not None), key=lambda op: op.hbm_bytes - op.min_bytes,
                default=None)
    excess = worst.hbm_bytes - worst.min_bytes if worst is not None and worst.hbm_bytes is not None else 0
    if launcher is not None and outside and outside >= excess:
        return Waste(launcher_waste(launcher))
    if worst is not None and worst.ratio and worst.ratio > 1.0 and worst.why and (
            trip is None or excess >= total - minimum):
        return Waste(f"{worst.name}: {worst.verb} {worst.ratio:.1f}× — {worst.why}", worst.name)
    if trip is not None:
        return trip
    if len(perf_calls) > 1:
        return Waste(f"the {len(perf_calls)} pallas_calls move {total / minimum:.1f}× the minimum traffic between them")
    return Waste("every operand crosses once, but the kernel's operands are larger than the spec's inputs and output "
                 "(padded or reshaped before the pallas_call)")
