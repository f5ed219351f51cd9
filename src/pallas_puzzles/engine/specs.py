"""Canonical reference specs and input generators: one module per spec in the course's `specs/`.

They live in the course folder, not in the learner's file: editing the spec shown in
an exercise cannot make a wrong kernel pass. A spec module defines
``spec(*inputs)`` in plain jax.numpy and may define ``make_inputs(sizes, rng)``
when the generic generator (uniform floats in [low, high), integers in
[low, high)) is not enough, e.g. for packed 4-bit weights.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from pallas_puzzles.course.model import InputSpec, Puzzle, Reshape


@functools.cache
def _module_at(path: Path) -> ModuleType:
    # A name of its own per file, so two courses' specs of the same name never meet.
    name = "pallas_puzzles_spec_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise ImportError(f"no spec module at {path}")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def spec_module(puzzle: Puzzle) -> ModuleType:
    return _module_at(puzzle.spec_path.resolve())


def case_seed(puzzle: Puzzle, case_index: int) -> list[int]:
    """From the puzzle's name, not its position: inserting a puzzle changes no other puzzle's inputs."""
    return [20261122, zlib.crc32(puzzle.name.encode()), case_index]


def make_inputs(puzzle: Puzzle, sizes: dict[str, int], case_index: int) -> tuple[np.ndarray, ...]:
    """Deterministic random inputs for one shape case, as numpy arrays, in the case's distribution."""
    rng = np.random.default_rng(case_seed(puzzle, case_index))
    custom = getattr(spec_module(puzzle), "make_inputs", None)
    if custom is not None:
        raw = [(array, array.dtype) for array in custom(sizes, rng)]
    else:
        raw = [_uniform(item, item.concrete_shape(sizes), rng) for item in puzzle.inputs]
    reshapes = {r.input: r for r in puzzle.distribution(case_index)}
    return tuple(_held_for_placing(_reshaped(values, reshapes.get(item.name)), dtype)
                 for item, (values, dtype) in zip(puzzle.inputs, raw))


# XLA:CPU places an array without copying it when its data starts on this boundary (jax.device_put
# then wraps numpy's memory; elsewhere it copies).
_XLA_CPU_ALIGNMENT = 64


def _held_for_placing(values: np.ndarray, dtype: Any) -> np.ndarray:
    """`values` cast to `dtype` (as astype casts) into memory XLA:CPU can use as it is, read-only. A case's
    inputs are then held once by a check in the interpreters, not twice: on_device's arrays are views of
    them (big_blocks' largest case: 8 MiB less, at the course's peak of memory). Read-only, so nothing
    can change them under the arrays that share their memory."""
    size = int(np.prod(values.shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + _XLA_CPU_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % _XLA_CPU_ALIGNMENT
    held = raw[start:start + size].view(dtype).reshape(values.shape)
    np.copyto(held, values, casting="unsafe")
    held.flags.writeable = False
    return held


def _uniform(item: InputSpec, shape: tuple[int, ...], rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    """Values in [low, high) (float64 until the end) and the dtype they are cast to."""
    import jax.numpy as jnp  # knows bfloat16 and friends

    dtype = jnp.dtype(item.dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(item.low), int(item.high), size=shape), dtype
    return rng.uniform(item.low, item.high, size=shape), dtype


def _reshaped(values: np.ndarray, how: Reshape | None) -> np.ndarray:
    """The case's declared distribution (far from zero, or wide) applied to floating values."""
    if how is None or "float" not in np.dtype(values.dtype).name:
        return values
    return values.astype(np.float64) * how.scale + how.shift


def on_device(arrays: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    """A case's inputs as jax arrays. jax.device_put, not jnp.asarray: the same arrays (dtypes
    canonicalised alike), but jnp.asarray compiles a conversion for every new shape."""
    import jax

    return tuple(jax.device_put(a) for a in arrays)


def expected_output(puzzle: Puzzle, inputs: tuple[np.ndarray, ...]) -> np.ndarray:
    return expected_and_flops(puzzle, inputs)[0]


def expected_and_flops(puzzle: Puzzle, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """Run the canonical spec on the CPU; return numpy and the FLOPs XLA counts in it.

    The spec is jitted: run eagerly, every jnp operation would compile on its
    own for every new shape, which costs far more than one compiled program.
    The FLOP count comes from the same compiled program (XLA's cost analysis).
    """
    import jax

    module = spec_module(puzzle)
    with jax.default_device(jax.devices("cpu")[0]):
        compiled = jax.jit(module.spec).lower(*inputs).compile()
        out = compiled(*inputs)
    return np.asarray(out), _flops(compiled)


def _flops(compiled: object) -> float:
    """XLA's FLOP count; cost_analysis() gives a dict, or a list of one dict on older jax."""
    try:
        analysis = compiled.cost_analysis()  # type: ignore[attr-defined]
    except Exception:  # a backend without cost analysis: no compute roof
        return 0.0
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    return max(0.0, float((analysis or {}).get("flops", 0.0)))


def case_label(sizes: dict[str, int], puzzle: Puzzle | None = None, case_index: int = 0) -> str:
    """"N0=10, T=77", plus how the inputs were reshaped when the case declares it."""
    label = ", ".join(f"{k}={v}" for k, v in sizes.items())
    reshaped = [r.describe() for r in puzzle.distribution(case_index)] if puzzle is not None else []
    return "; ".join([label, *filter(None, reshaped)])
