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
import json
from pathlib import Path

import numpy as np

from pallas_puzzles import backends
from pallas_puzzles.checking import cache
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.targets.pallas_call import fast_path

MAX_ENTRIES = 2000  # a few courses' worth of cases; the oldest go first
# One answer per file: a line of JSON (dtype, shape, FLOPs), then the output's bytes in C order. Read
# whole and cut: 0.05 ms a case, where numpy's .npz (a zip of four arrays) took 0.23 ms.
SUFFIX = ".answer"


def expected_and_flops(puzzle: Puzzle, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """The spec's output and FLOP count for these inputs: stored if this machine computed them before."""
    if fast_path.switched_off():  # nothing kept: every answer computed afresh
        return specs.expected_and_flops(puzzle, inputs)
    path = backends.spec_outputs_dir() / f"{_key(puzzle, inputs)}{SUFFIX}"
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
        data = path.read_bytes()
        line = data.index(b"\n")
        header = json.loads(data[:line])
        dtype, shape = _dtype(header["dtype"]), tuple(header["shape"])
        bits = np.frombuffer(data, np.uint8, offset=line + 1)
        if bits.size != int(np.prod(shape)) * dtype.itemsize:  # cut short: a miss
            return None
        return bits.view(dtype).reshape(shape).copy(), float(header["flops"])  # copied: aligned and writable
    except Exception:  # missing, damaged, or written otherwise: a miss
        return None


def _write(path: Path, expected: np.ndarray, flops: float) -> None:
    """Store an answer; its dtype goes by name, as numpy cannot name bfloat16 on its own."""
    contiguous = np.asarray(expected, order="C")  # keeps a 0-d array 0-d
    header = json.dumps({"dtype": contiguous.dtype.name, "shape": list(contiguous.shape), "flops": float(flops)})
    cache.store_atomically(path, header.encode() + b"\n" + contiguous.tobytes(), MAX_ENTRIES)


def _dtype(name: str) -> np.dtype:
    import jax.numpy as jnp  # knows bfloat16 and the other names numpy does not

    return np.dtype(jnp.dtype(name))
