"""Grid step -> what each operand's blocks look like: the data behind `show` (terminal and HTML).

Pure functions over a CaseResult's recorded call layout (the block each grid
step uses, from the index maps the checker evaluated) and its comparison (the
block map of wrong, NaN and never-written elements). No second simulation.

Each operand is drawn at block granularity on a 2-D board: the last dimension
runs across, every other dimension is folded into rows. Boards larger than
the room allows group several blocks into one cell.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from pallas_puzzles.report import sentences
from pallas_puzzles.results import CallLayout, CaseResult, OperandLayout

Cell = tuple[int, int]
GOOD, WRONG, NAN, UNWRITTEN = ".", "x", "N", "?"
FAULT_ORDER = (UNWRITTEN, NAN, WRONG)  # worst first, as in the failure panel's block map


@dataclass(frozen=True)
class OperandBoard:
    """One operand drawn at block granularity, with the block every grid step touches."""

    name: str
    role: str
    shape: tuple[int, ...]
    dtype: str
    block: tuple[int, ...] | None  # None: not pipelined (the kernel sees the whole operand)
    memory_space: str
    rows: int = 1  # board size in cells
    cols: int = 1
    group: Cell = (1, 1)  # blocks per cell (rows, cols); (1, 1) unless scaled to fit
    block_indices: tuple[tuple[int, ...], ...] | None = None  # per step
    touched: tuple[Cell | None, ...] = ()  # per step: the cell holding the step's block
    copied: tuple[bool, ...] = ()  # per step: a new block moved in (True) or the previous one reused
    faults: tuple[str, ...] | None = None  # after a failed check: rows of GOOD/WRONG/NAN/UNWRITTEN
    # Blocks per dimension of the array; an index_map that chose a block past them widens the board,
    # and the cells beyond the array are `outside` (drawn apart, so the faulting block is seen).
    blocks: tuple[int, ...] = ()
    outside: frozenset[Cell] = frozenset()

    @property
    def pipelined(self) -> bool:
        return self.block is not None and self.block_indices is not None

    @property
    def fold_note(self) -> str:
        """How an operand of more than two dimensions is laid out in rows, or ""."""
        if self.block is None or len(self.shape) <= 2:
            return ""
        counts = [max(1, -(-s // max(1, b))) for s, b in zip(self.shape, self.block)]
        return (f"rows: {' x '.join(map(str, counts[:-1]))} blocks of dims 0-{len(counts) - 2}, "
                f"dim 0 slowest")

    def visited_until(self, step: int) -> set[Cell]:
        """Cells some step up to and including `step` touched (for outputs: written so far)."""
        return {c for c in self.touched[: step + 1] if c is not None}

    def is_outside(self, step: int) -> bool:
        """The block this step's index_map chose lies outside the array."""
        index = self.block_indices[step] if self.block_indices and step < len(self.block_indices) else ()
        return any(i < 0 or i >= n for i, n in zip(index, self.blocks))

    def describe_block(self, step: int) -> str:
        if not self.pipelined:
            where = f" in {self.memory_space.upper()}" if self.memory_space else ""
            return f"whole array{where}, not split into blocks"
        if step >= len(self.touched):
            return "no block recorded for this step"
        index = self.block_indices[step]  # type: ignore[index]
        if self.is_outside(step):
            return sentences.outside_block(index, self.blocks)
        return f"block {index} — {sentences.MOVES[(self.role == 'output', self.copied[step])]}"


@dataclass(frozen=True)
class GridView:
    """Everything a step-through view shows for one pallas_call of one shape case."""

    title: str
    case: str
    kernel: str
    grid: tuple[int, ...]
    semantics: tuple[str, ...]
    points: tuple[tuple[int, ...], ...]
    boards: tuple[OperandBoard, ...]
    bad_steps: tuple[int, ...] = ()  # steps whose output block holds bad elements, or that a finding names
    ran: int | None = None  # steps the interpreter ran before stopping; None when all (or unknown)
    verdict: str = ""  # one line: passed, or what went wrong
    fault_step: int | None = None  # the step a finding names (an out-of-bounds read, a race, ...)
    calls_in_case: int = 1
    passed: bool = False  # the shape case passed (exit codes and colours read this, never the verdict's words)
    planned: bool = False  # nothing ran: the steps are the index_maps' plan, checked before the kernel

    @property
    def steps(self) -> int:
        return len(self.points)

    @property
    def first_bad(self) -> int | None:
        return self.bad_steps[0] if self.bad_steps else None


def _blocks_per_dim(op: OperandLayout) -> tuple[int, ...]:
    assert op.block is not None
    return tuple(max(1, -(-s // max(1, b))) for s, b in zip(op.shape, op.block))


def _fold(index: tuple[int, ...], counts: tuple[int, ...]) -> Cell:
    """A block index on the 2-D board: the last dimension across, the rest folded into rows."""
    if not counts:
        return 0, 0
    row = 0
    for i, n in zip(index[:-1], counts[:-1]):
        row = row * n + min(max(i, 0), n - 1)
    return row, min(max(index[-1], 0), counts[-1] - 1)


def _widened(counts: tuple[int, ...], indices: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """Blocks per dimension, widened to hold every block an index_map chose past the array's end."""
    return tuple(max([n, *(i[d] + 1 for i in indices if d < len(i))]) for d, n in enumerate(counts))


def _outside_cells(counts: tuple[int, ...], board: tuple[int, ...], group: Cell) -> frozenset[Cell]:
    """Cells of the widened board that hold no block of the array."""
    if board == counts:
        return frozenset()
    inside = {(r // group[0], c // group[1])
              for r, c in (_fold(i, board) for i in itertools.product(*(range(n) for n in counts)))}
    rows, cols = _board_cells(board)
    return frozenset((r // group[0], c // group[1]) for r in range(rows) for c in range(cols)) - inside


def _board_cells(counts: tuple[int, ...]) -> Cell:
    return (math.prod(counts[:-1]) if counts else 1), (counts[-1] if counts else 1)


def _faults(op: OperandLayout, counts: tuple[int, ...], board: tuple[int, ...], group: Cell, rows: int,
            cols: int, case: CaseResult) -> tuple[str, ...] | None:
    """The comparison's block map, redrawn on this operand's board (leading dims share the map)."""
    m = case.mismatch
    if m is None or op.role != "output" or tuple(m.shape) != tuple(op.shape) or not m.block_map:
        return None
    assert op.block is not None
    map_rows, map_cols = len(m.block_map), len(m.block_map[0])
    shape2 = (1, *op.shape)[-2:] if len(op.shape) < 2 else op.shape[-2:]
    block2 = (1, *op.block)[-2:] if len(op.block) < 2 else op.block[-2:]
    # The map groups elements in cells of cell_r x cell_c; find which cell each block starts in.
    cell_r = block2[0] * math.ceil(-(-shape2[0] // block2[0]) / map_rows) if shape2[0] else 1
    cell_c = block2[1] * math.ceil(-(-shape2[1] // block2[1]) / map_cols) if shape2[1] else 1
    cells = [[GOOD] * cols for _ in range(rows)]
    for index in itertools.product(*(range(n) for n in counts)):
        r2 = index[-2] if len(index) >= 2 else 0
        c2 = index[-1] if index else 0
        mark = m.block_map[min(r2 * block2[0] // max(1, cell_r), map_rows - 1)][
            min(c2 * block2[1] // max(1, cell_c), map_cols - 1)]
        r, c = _fold(index, board)
        cell = cells[r // group[0]][c // group[1]]
        if mark != GOOD and (cell == GOOD or FAULT_ORDER.index(mark) < FAULT_ORDER.index(cell)):
            cells[r // group[0]][c // group[1]] = mark
    return tuple("".join(row) for row in cells)


MAX_BLOCKS_WIDENED = 100_000  # past this many blocks, a board is not widened for blocks outside the array


def make_board(op: OperandLayout, steps: int, case: CaseResult, max_rows: int, max_cols: int) -> OperandBoard:
    base = OperandBoard(op.name, op.role, tuple(op.shape), op.dtype, op.block, op.memory_space)
    if op.block is None or op.block_indices is None:
        return base
    counts = _blocks_per_dim(op)
    indices = tuple(tuple(i) for i in op.block_indices[:steps])
    board = _widened(counts, indices) if math.prod(counts) <= MAX_BLOCKS_WIDENED else counts
    full_rows, full_cols = _board_cells(board)
    group = (-(-full_rows // max_rows), -(-full_cols // max_cols))
    rows, cols = -(-full_rows // group[0]), -(-full_cols // group[1])
    touched = []
    for index in indices:
        r, c = _fold(index, board)
        touched.append((r // group[0], c // group[1]))
    copied = op.moves()[:steps]
    faults = _faults(op, counts, board, group, rows, cols, case)
    return OperandBoard(op.name, op.role, tuple(op.shape), op.dtype, op.block, op.memory_space, rows, cols,
                        group, indices, tuple(touched), copied, faults, counts,
                        _outside_cells(counts, board, group))


def _fault_step(case: CaseResult, points: tuple[tuple[int, ...], ...]) -> int | None:
    for finding in case.findings:
        if finding.grid_point is not None and tuple(finding.grid_point) in points:
            return points.index(tuple(finding.grid_point))
    return None


def _bad_steps(case: CaseResult, points: tuple[tuple[int, ...], ...],
               boards: tuple[OperandBoard, ...]) -> tuple[int, ...]:
    fault = _fault_step(case, points)
    bad: set[int] = {fault} if fault is not None else set()
    for board in boards:
        if board.faults is None:
            continue
        for step, cell in enumerate(board.touched):
            if cell is not None and board.faults[cell[0]][cell[1]] != GOOD:
                bad.add(step)
    return tuple(sorted(bad))


def _verdict(case: CaseResult) -> str:
    if case.passed:
        return sentences.case_outcome(case) + "."
    if case.finding is not None:
        return case.finding.message
    if case.mismatch is None:
        return sentences.case_outcome(case) + "."
    return sentences.mismatch_counts(case.mismatch) + "."


def choose_call(case: CaseResult) -> CallLayout | None:
    """The call to show: the one whose output the comparison judged, else the last one."""
    if not case.calls:
        return None
    if case.mismatch is not None:
        for call in reversed(case.calls):
            if any(tuple(op.shape) == tuple(case.mismatch.shape) for op in call.role("output")):
                return call
    return case.calls[-1]


def build_view(case: CaseResult, title: str, max_rows: int = 16, max_cols: int = 16) -> GridView | None:
    """The step-through view of a case; None when the case made no pallas_call."""
    call = choose_call(case)
    if call is None:
        return None
    points = tuple(call.grid_points())
    boards = tuple(make_board(op, len(points), case, max_rows, max_cols) for op in call.operands)
    ran, planned = None, False
    if case.grid_points_run is not None and not case.passed and call is case.calls[-1]:
        earlier = sum(math.prod(c.grid) for c in case.calls[:-1])
        ran_here = len(case.grid_points_run) - earlier
        if 0 < ran_here < len(points):
            ran = ran_here  # the interpreter stopped part-way through this call
        planned = ran_here == 0  # stopped before the first step: the index_maps' plan is all there is
    return GridView(title=title, case=case.label, kernel=call.kernel, grid=tuple(call.grid),
                    semantics=tuple(call.semantics), points=points, boards=boards,
                    bad_steps=_bad_steps(case, points, boards), ran=ran, verdict=_verdict(case),
                    calls_in_case=len(case.calls), fault_step=_fault_step(case, points), passed=case.passed,
                    planned=planned)
