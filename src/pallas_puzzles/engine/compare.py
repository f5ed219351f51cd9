"""Compare a kernel's output with the spec and summarise the difference.

The summary is focused: counts, the largest error, the first few bad elements
and a small map of where they lie at block granularity, so "the last column
of blocks is wrong" is visible at a glance.
"""

from __future__ import annotations

import numpy as np

from pallas_puzzles.engine.unwritten import fill_for
from pallas_puzzles.results import BadElement, ElementFault, Mismatch

MAX_EXAMPLES = 6
MAX_MAP_CELLS = 32  # per axis; larger grids are grouped


def bad_mask(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    if np.issubdtype(expected.dtype, np.integer) or expected.dtype == np.bool_:
        return np.asarray(got != expected)
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    return ~close


def _reasons(expected: np.ndarray, got: np.ndarray, bad: np.ndarray, covered: np.ndarray | None,
             fill: float | None) -> tuple[np.ndarray, np.ndarray]:
    sentinel = fill_for(got.dtype, fill)
    unwritten = bad & (got == sentinel) if sentinel is not None else np.zeros_like(bad)
    if covered is not None and covered.shape == bad.shape:
        unwritten |= bad & ~covered  # no grid point's output block reaches these elements
    if np.issubdtype(got.dtype, np.floating):
        garbage = bad & ~np.isfinite(got.astype(np.float64)) & np.isfinite(expected.astype(np.float64))
    else:
        garbage = np.zeros_like(bad)
    return unwritten, garbage & ~unwritten


def block_map(bad: np.ndarray, unwritten: np.ndarray, garbage: np.ndarray,
              block: tuple[int, ...]) -> tuple[tuple[str, ...], str]:
    """Rows of cells, one cell per block of the output's last two dimensions."""
    if bad.ndim == 0:
        return ("x" if bad else ".",), "the output is a scalar"
    if bad.ndim == 1:
        bad, unwritten, garbage = bad[None, :], unwritten[None, :], garbage[None, :]
        block = (1, block[-1] if block else bad.shape[1])
    lead = bad.ndim - 2
    if lead:
        bad, unwritten, garbage = (a.reshape((-1,) + a.shape[-2:]).any(axis=0) for a in (bad, unwritten, garbage))
    rows_b, cols_b = (max(1, b) for b in (block[-2:] if len(block) >= 2 else (1, block[-1])))
    n_rows, n_cols = -(-bad.shape[0] // rows_b), -(-bad.shape[1] // cols_b)
    group_r = -(-n_rows // MAX_MAP_CELLS)
    group_c = -(-n_cols // MAX_MAP_CELLS)
    cell_r, cell_c = rows_b * group_r, cols_b * group_c
    out = []
    for r0 in range(0, bad.shape[0], cell_r):
        row = []
        for c0 in range(0, bad.shape[1], cell_c):
            window = (slice(r0, r0 + cell_r), slice(c0, c0 + cell_c))
            if unwritten[window].any():
                row.append("?")
            elif garbage[window].any():
                row.append("N")
            elif bad[window].any():
                row.append("x")
            else:
                row.append(".")
        out.append("".join(row))
    grouping = f", each cell {group_r}x{group_c} blocks" if group_r * group_c > 1 else ""
    batch = ", all leading (batch) dimensions overlaid" if lead else ""
    title = f"one cell per {rows_b}x{cols_b} block{grouping}{batch}"
    if bad.shape[0] == 1 and rows_b == 1:
        title = f"one cell per block of {cols_b}{grouping}"
    return tuple(out), title


def compare(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float,
            block_shape: tuple[int, ...] | None, covered: np.ndarray | None = None,
            fill: float | None = None) -> Mismatch | None:
    """None when the output matches; otherwise a focused summary.

    `fill` is what the output held before any program wrote it, when not the sentinel.
    """
    bad = bad_mask(expected, got, rtol, atol)
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    unwritten, garbage = _reasons(expected, got, bad, covered, fill)
    e64 = expected.astype(np.float64)
    g64 = got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        errors = np.abs(g64 - e64)[bad & ~unwritten & ~garbage]
    max_err = float(errors.max()) if errors.size else float("nan")
    examples = []
    for flat in np.flatnonzero(bad.ravel())[:MAX_EXAMPLES]:
        index = tuple(int(i) for i in np.unravel_index(flat, bad.shape))
        fault = (ElementFault.UNWRITTEN if unwritten[index] else ElementFault.NAN if garbage[index]
                 else ElementFault.WRONG)
        examples.append(BadElement(index=index, expected=float(e64[index]), got=float(g64[index]), fault=fault))
    block = tuple(block_shape) if block_shape else tuple(expected.shape)
    rows, title = block_map(bad, unwritten, garbage, block)
    return Mismatch(
        shape=tuple(expected.shape), total=int(expected.size), n_bad=n_bad,
        n_nan=int(garbage.sum()), n_unwritten=int(unwritten.sum()), max_abs_error=max_err,
        examples=tuple(examples), block_shape=block, block_map=rows, block_map_title=title,
        rtol=rtol, atol=atol,
    )
