"""Why an index_map asks for a block outside its array, told from the block indices of the whole grid.

Four mistakes give the same fault and need different fixes:
- the grid is one block too long (pl.cdiv(n, B) + 1, n // B + 1): every operand that follows that
  grid axis runs past its end, and the index maps are right: the `grid=` line is named first;
- an index_map reads the wrong grid axis (lambda i, j: (i,) where j walks this operand's blocks): the
  axis it reads fits other operands, so the grid is right; another axis may fit this one;
- an index_map returns the grid indices in the wrong order ((i, j) where (j, i) fits, as a transposed
  output needs): swapping them keeps every block inside the array;
- an index_map returns element offsets (i * B) instead of block numbers.
Anything else (an index moved by one, a table lookup) is named as it is, under the catalogue's explanation.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

Point = tuple[int, ...]

GRID_TOO_LONG = ("Along this grid axis there are more steps than blocks: every operand that follows the axis "
                 "asks for a block past its end at the last step. A grid of pl.cdiv(size, block) steps gives "
                 "each block exactly one program (the last block may hang over the edge: that is allowed).")
WRONG_AXIS = ("Each component an index_map returns is the block index along one dimension of its array, and it "
              "must come from the grid axis that walks that dimension. Check which grid axis walks which "
              "dimension of this operand (its index_map's arguments are the grid indices, in the grid's order).")
WRONG_ORDER = ("An index_map returns one block index per dimension of its array, in the array's order (rows "
               "first). Here the grid indices come back in the other order: the block a grid point works on "
               "is at (j, i), not (i, j), or the other way round, as a transposed output needs.")
OFFSETS = ("Pallas turns a block number into an element offset itself, multiplying it by the block size: an "
           "index_map that returns i * block_size asks for a block block_size times too far. Return i.")

def _blocks(info: BlockInfo, dim: int) -> int:
    assert info.block_dims is not None
    return max(-(-info.array_shape[dim] // info.block_dims[dim]), 1)


def _follows(info: BlockInfo, points: Sequence[Point], dim: int, scale: int = 1) -> int | None:
    """The grid axis whose index (times `scale`) is this dimension's block index at every grid point."""
    indices = info.block_indices or []
    for axis in range(len(points[0]) if points else 0):
        if all(index[dim] == point[axis] * scale for point, index in zip(points, indices)):
            if len({point[axis] for point in points}) > 1:
                return axis
    return None


def _fits_elsewhere(record: CallRecord, points: Sequence[Point], axis: int, extent: int) -> bool:
    """Does some operand walk a dimension with this grid axis and stay inside its array?"""
    for other in record.inputs + record.outputs:
        if other.block_indices is None or other.block_dims is None or other.memory_space is not None:
            continue
        for dim in range(len(other.block_dims)):
            if _follows(other, points, dim) == axis and extent <= _blocks(other, dim):
                return True
    return False


def _swapped(info: BlockInfo, record: CallRecord, points: Sequence[Point]) -> tuple[int, ...] | None:
    """Another order of the grid axes this index_map returns that keeps every block inside the array."""
    dims = list(range(len(info.block_dims or [])))
    axes = {d: _follows(info, points, d) for d in dims}
    walked = [d for d in dims if axes[d] is not None]
    if len(walked) < 2:
        return None
    for order in itertools.permutations([axes[d] for d in walked]):
        if list(order) != [axes[d] for d in walked] and all(
                record.grid[a] <= _blocks(info, d) for d, a in zip(walked, order)):  # type: ignore[index]
            return tuple(int(a) for a in order)  # type: ignore[arg-type]
    return None


def _arguments(info: BlockInfo, count: int) -> list[str]:
    """The names the index_map gives the grid indices (i, j, ... when it has none of its own)."""
    code = getattr(info.index_map, "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    return names[:count] if len(names) >= count else ["ijklmn"[a] if a < 6 else f"g{a}" for a in range(count)]


def outside(info: BlockInfo, record: CallRecord, points: Sequence[Point], step: int, dim: int) -> Finding:
    """The finding for the first block outside the array: at grid step `step`, along dimension `dim`."""
    point, index = points[step], (info.block_indices or [])[step]
    size, extent = (info.block_dims or [])[dim], info.array_shape[dim]
    blocks = _blocks(info, dim)
    side = ("before the start" if index[dim] < 0 else
            f"past the end: {info.name} has only {extent} element(s) along that dimension")
    fault = (f"{info.role.capitalize()} {info.name}: block index {index} at grid point {point} lies outside "
             f"the array. Along dimension {dim} a block holds {size} element(s), so block {index[dim]} would start "
             f"at element {index[dim] * size}, {side}, so its valid block indices there are 0..{blocks - 1}.")
    where = record.where(info)
    axis = _follows(info, points, dim)
    if axis is not None:
        order = _swapped(info, record, points)
        if order is not None:
            names = _arguments(info, len(point))
            wanted = ", ".join(names[a] for a in order)
            return Finding(FindingKind.OOB_BLOCK, f"{fault} Its index_map returns the grid indices in the wrong "
                           f"order: with lambda {', '.join(names)}: ({wanted}) every block would lie inside "
                           f"{info.name}.", explanation=WRONG_ORDER, where=where, grid_point=point, array=info.name)
        if not _fits_elsewhere(record, points, axis, record.grid[axis]):
            grid = argument_line(record.call_line, "grid")
            return Finding(FindingKind.OOB_BLOCK, f"{fault} Grid axis {axis} has {record.grid[axis]} steps, more "
                           f"than the {blocks} block(s) along that dimension: the grid is too long, not the "
                           "index_map.", explanation=GRID_TOO_LONG,
                           where=((grid,) if grid is not None else ()) + where, grid_point=point, array=info.name)
        used = {_follows(info, points, d) for d in range(len(index)) if d != dim}
        better = [a for a in range(len(point)) if a != axis and a not in used and record.grid[a] == blocks]
        hint = (f" Grid axis {better[0]} has exactly {blocks} steps: did you mean it?" if better else "")
        return Finding(FindingKind.OOB_BLOCK, f"{fault} Its index_map gives dimension {dim} the index of grid axis "
                       f"{axis}, which runs to {record.grid[axis] - 1} for the other operands.{hint}",
                       explanation=WRONG_AXIS, where=where, grid_point=point, array=info.name)
    if size > 1 and _follows(info, points, dim, scale=size) is not None:
        return Finding(FindingKind.OOB_BLOCK, f"{fault} Its index_map returns element offsets (grid index times "
                       f"{size}), not block numbers.", explanation=OFFSETS, where=where, grid_point=point,
                       array=info.name)
    past = "before the first" if index[dim] < 0 else "past the end"
    return Finding(FindingKind.OOB_BLOCK, f"{fault} Its index_map returns a block {past} at that grid point.",
                   where=where, grid_point=point, array=info.name)
