"""A spec's answers kept on disk: each shape case's expected output and FLOP count, computed once.

The spec of a case is a jitted JAX function of deterministic inputs: tracing, lowering and
compiling it again costs a cold check 3-6 ms per case, about a fifth of a small puzzle's
check once its kernel runs op by op. Its answer depends only on the spec (and the checker
that runs it), the inputs and the JAX that computed it, so it is stored under a key made of
all of these: every source file of this package and of the course's specs, the inputs'
dtypes, shapes and bytes, the Python, jax, jaxlib and numpy versions, and the JAX/XLA
settings in the environment. A changed spec or JAX never meets a stale answer; it only
leaves an unused file. Like JAX's compilation cache beside it, the folder is safe to delete
and one that cannot be written only makes checks slower. PALLAS_PUZZLES_FAST=0 leaves it
unread and unwritten (every answer computed afresh).
"""

from __future__ import annotations

import functools
import hashlib
import io
from pathlib import Path

import numpy as np

from pallas_puzzles import backends
from pallas_puzzles.checking import cache
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.targets.pallas_call import fast_path

MAX_ENTRIES = 2000  # a few courses' worth of cases; the oldest go first


def expected_and_flops(puzzle: Puzzle, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """The spec's output and FLOP count for these inputs: stored if this machine computed them before."""
    if fast_path.switched_off():  # nothing kept: every answer computed afresh
        return specs.expected_and_flops(puzzle, inputs)
    path = backends.spec_outputs_dir() / f"{_key(puzzle, inputs)}.npz"
    stored = _read(path)
    if stored is not None:
        return stored
    answer = specs.expected_and_flops(puzzle, inputs)
    _write(path, *answer)
    return answer


@functools.cache
def _context() -> bytes:
    """What every key shares: the versions and the JAX/XLA settings of this process."""
    return "\0".join(cache.runtime_identity()).encode()


def _key(puzzle: Puzzle, inputs: tuple[np.ndarray, ...]) -> str:
    digest = hashlib.sha256(_context())
    digest.update(cache.code_fingerprint(puzzle.folder).encode())
    digest.update(puzzle.name.encode())
    for array in inputs:
        digest.update(f"\0{array.dtype.name}{array.shape}\0".encode())
        digest.update(array.tobytes())  # C order whatever the layout
    return digest.hexdigest()


def _read(path: Path) -> tuple[np.ndarray, float] | None:
    try:
        with np.load(path, allow_pickle=False) as stored:
            dtype = _dtype(str(stored["dtype"]))
            expected = stored["bits"].view(dtype).reshape(tuple(stored["shape"]))
            return expected, float(stored["flops"])
    except Exception:  # missing, half-written, or from a numpy that stores otherwise: a miss
        return None


def _write(path: Path, expected: np.ndarray, flops: float) -> None:
    """Store an answer; its bytes are kept with the dtype's name, as numpy cannot name bfloat16 on its own."""
    contiguous = np.asarray(expected, order="C")  # keeps a 0-d array 0-d
    buffer = io.BytesIO()
    np.savez(buffer, bits=contiguous.reshape(-1).view(np.uint8),
             dtype=np.array(contiguous.dtype.name), shape=np.array(contiguous.shape, dtype=np.int64),
             flops=np.array(flops))
    cache.store_atomically(path, buffer.getvalue(), MAX_ENTRIES)


def _dtype(name: str) -> np.dtype:
    import jax.numpy as jnp  # knows bfloat16 and the other names numpy does not

    return np.dtype(jnp.dtype(name))
