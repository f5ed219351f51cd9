"""Checking every BlockSpec's index_map over the whole grid, before anything runs.

Finds block indices outside the array and output blocks that two grid points
write, and records which output elements some grid point's block covers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

MAX_GRID_POINTS_CHECKED = 50_000


def _evaluate(index_map: Callable[..., Any], point: tuple[int, ...], prefetch: Sequence[Any]) -> tuple[int, ...]:
    out = index_map(*point, *prefetch)
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return tuple(int(np.asarray(v)) for v in out)


def _outside(info: BlockInfo, record: CallRecord, point: tuple[int, ...], index: tuple[int, ...],
             dim: int, size: int) -> Finding:
    extent = info.array_shape[dim]
    last_valid = max(-(-extent // size) - 1, 0)
    return Finding(
        FindingKind.OOB_BLOCK,
        f"{info.role.capitalize()} {info.name}: block index {index} at grid point {point} lies outside "
        f"the array. Along dimension {dim} a block holds {size} element(s), so block {index[dim]} "
        f"would start at element {index[dim] * size}, past the end: {info.name} has only {extent} "
        f"element(s) along that dimension, so its valid block indices there are 0..{last_valid}.",
        where=_grid_first(record, point, index[dim], last_valid) + record.where(info), grid_point=point,
        array=info.name,
    )


def _grid_first(record: CallRecord, point: tuple[int, ...], block: int, last_valid: int) -> tuple[SourceLine, ...]:
    """The `grid=` line, when the grid has more steps along an axis than there are blocks:
    the index_map is then right and the grid is what overshoots."""
    too_long = any(p == block and g > last_valid + 1 for p, g in zip(point, record.grid))
    line = argument_line(record.call_line, "grid") if too_long else None
    return (line,) if line is not None else ()


def check_index_maps(record: CallRecord, prefetch: Sequence[Any], allow_revisits: bool) -> None:
    """Raise StrictViolation for the first bad block index or double write."""
    grid = record.grid
    if not grid or int(np.prod(grid)) > MAX_GRID_POINTS_CHECKED:
        return
    points = list(itertools.product(*(range(g) for g in grid)))
    first: StrictViolation | None = None
    for info in record.inputs + record.outputs:
        if info.index_map is None or info.block_dims is None or info.memory_space is not None:
            continue
        # After the first fault the other operands' block indices are still recorded: the grid
        # view draws every operand's blocks, not only those of the operands checked before it.
        try:
            visits = _visits(info, record, points, prefetch)
            if info.role == "output" and visits is not None:
                info.covered = _coverage(info.array_shape, info.block_dims, visits)
                _check_revisits(info, record, points, visits, allow_revisits)
        except StrictViolation as exc:
            first = first or exc
    if first is not None:
        raise first


def _visits(info: BlockInfo, record: CallRecord, points: list[tuple[int, ...]],
            prefetch: Sequence[Any]) -> dict[tuple[int, ...], list[int]] | None:
    """Block index -> the positions (in grid order) of the grid points that visit it.

    None when the index_map cannot be evaluated eagerly: the interpreter checks it then.
    """
    dims = info.block_dims
    assert dims is not None
    visits: dict[tuple[int, ...], list[int]] = {}
    info.block_indices = []
    outside: Finding | None = None
    for order, point in enumerate(points):
        try:
            index = _evaluate(info.index_map, point, prefetch)  # type: ignore[arg-type]
        except Exception:
            info.block_indices = None
            return None
        if len(index) != len(dims):
            info.block_indices = None
            return None
        for d, (size, i) in enumerate(zip(dims, index)):
            if outside is None and (i < 0 or i * size >= info.array_shape[d]):
                outside = _outside(info, record, point, index, d, size)
        visits.setdefault(index, []).append(order)
        info.block_indices.append(index)  # every step's, the ones outside too: the view draws them
    if outside is not None:
        raise StrictViolation(outside)
    return visits


def _coverage(shape: tuple[int, ...], dims: list[int], blocks: dict[tuple[int, ...], list[int]]) -> np.ndarray:
    covered = np.zeros(shape, dtype=bool)
    for index in blocks:
        covered[tuple(slice(i * size, (i + 1) * size) for i, size in zip(index, dims))] = True
    return covered


def _check_revisits(info: BlockInfo, record: CallRecord, points: list[tuple[int, ...]],
                    visits: dict[tuple[int, ...], list[int]], allow_revisits: bool) -> None:
    for block, orders in visits.items():
        if len(orders) < 2:
            continue
        first, second = points[orders[0]], points[orders[1]]
        consecutive = all(b - a == 1 for a, b in zip(orders, orders[1:]))
        if not consecutive:
            later = next(points[b] for a, b in zip(orders, orders[1:]) if b - a != 1)
            raise StrictViolation(Finding(
                FindingKind.REVISIT,
                f"Output {info.name}: block {block} is written at grid points {first} and {later}, "
                f"with other blocks in between.",
                where=record.where(info), grid_point=later, array=info.name,
            ))
        changing_axes = [a for a in range(len(first)) if first[a] != second[a]]
        declared = record.semantics
        arbitrary = bool(declared) and all(
            a < len(declared) and "arbitrary" in str(declared[a]).lower() for a in changing_axes
        )
        if not (arbitrary or (allow_revisits and not declared)):
            axes = ", ".join(str(a) for a in changing_axes)
            raise StrictViolation(Finding(
                FindingKind.RACE,
                f"Output {info.name}: grid points {first} and {second} both write block {block}; "
                f"grid axis {axes} does not move the output block.",
                where=record.where(info), grid_point=second, array=info.name,
            ))
