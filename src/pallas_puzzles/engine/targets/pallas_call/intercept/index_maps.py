"""Checking every BlockSpec's index_map over the whole grid, before anything runs.

Finds block indices outside the array and output blocks that two grid points
write, and records which output elements some grid point's block covers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.explain import block_index
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

MAX_GRID_POINTS_CHECKED = 50_000


def _evaluate(index_map: Callable[..., Any], point: tuple[int, ...], prefetch: Sequence[Any]) -> tuple[int, ...]:
    out = index_map(*point, *prefetch)
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return tuple(int(np.asarray(v)) for v in out)


def check_index_maps(record: CallRecord, prefetch: Sequence[Any], allow_revisits: bool) -> None:
    """Raise StrictViolation for the first bad block index or double write."""
    grid = record.grid
    if not grid or int(np.prod(grid)) > MAX_GRID_POINTS_CHECKED:
        return
    points = list(itertools.product(*(range(g) for g in grid)))
    first: StrictViolation | tuple[BlockInfo, int, int] | None = None
    for info in record.inputs + record.outputs:
        if info.index_map is None or info.block_dims is None or info.memory_space is not None:
            continue
        # After the first fault the other operands' block indices are still recorded: the grid
        # view draws every operand's blocks, and the cause of a block outside (explain/block_index.py)
        # is told from every operand's, not only those of the operands checked before it.
        try:
            visits, outside = _visits(info, points, prefetch)
            if outside is not None:
                first = first or (info, *outside)
            elif info.role == "output" and visits is not None:
                info.covered = _coverage(info.array_shape, info.block_dims, visits)
                _check_revisits(info, record, points, visits, allow_revisits)
        except StrictViolation as exc:
            first = first or exc
    if isinstance(first, tuple):
        first = StrictViolation(block_index.outside(first[0], record, points, first[1], first[2]))
    if first is not None:
        raise first


def _visits(info: BlockInfo, points: list[tuple[int, ...]], prefetch: Sequence[Any],
            ) -> tuple[dict[tuple[int, ...], list[int]] | None, tuple[int, int] | None]:
    """Block index -> the positions (in grid order) of the grid points that visit it, and the first
    (grid step, dimension) whose block lies outside the array (None when every block is inside).

    (None, None) when the index_map cannot be evaluated eagerly: the interpreter checks it then.
    """
    dims = info.block_dims
    assert dims is not None
    visits: dict[tuple[int, ...], list[int]] = {}
    info.block_indices = []
    outside: tuple[int, int] | None = None
    for order, point in enumerate(points):
        try:
            index = _evaluate(info.index_map, point, prefetch)  # type: ignore[arg-type]
        except Exception:
            info.block_indices = None
            return None, None
        if len(index) != len(dims):
            info.block_indices = None
            return None, None
        for d, (size, i) in enumerate(zip(dims, index)):
            if outside is None and (i < 0 or i * size >= info.array_shape[d]):
                outside = (order, d)
        visits.setdefault(index, []).append(order)
        info.block_indices.append(index)  # every step's, the ones outside too: the view draws them
    return visits, outside


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
