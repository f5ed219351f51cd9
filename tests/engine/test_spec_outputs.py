"""A spec's answers stored on disk come back bit for bit, and only for what they were computed from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import COURSE

from pallas_puzzles import backends
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine import spec_outputs, specs
from pallas_puzzles.engine.targets.pallas_call import fast_path


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PALLAS_PUZZLES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(fast_path.VARIABLE, raising=False)
    return backends.spec_outputs_dir()


def _case(name: str, index: int = 0) -> tuple[object, tuple[np.ndarray, ...]]:
    puzzle = COURSE.find(name)
    sizes = puzzle.cases_for(INTERPRET)[index]
    return puzzle, specs.make_inputs(puzzle, sizes, index)


def _computed_here(monkeypatch) -> list[str]:
    """Names of the puzzles whose spec is computed from now on (the spec itself still runs)."""
    computed: list[str] = []
    compute = specs.expected_and_flops

    def counting(puzzle, inputs):
        computed.append(puzzle.name)
        return compute(puzzle, inputs)

    monkeypatch.setattr(specs, "expected_and_flops", counting)
    return computed


@pytest.mark.parametrize("name", ["constant_add", "bf16_matmul", "quantized_matmul", "fused_layernorm"])
def test_a_stored_answer_comes_back_bit_for_bit_without_running_the_spec(folder, monkeypatch, name):
    puzzle, inputs = _case(name)
    computed = _computed_here(monkeypatch)
    first, flops = spec_outputs.expected_and_flops(puzzle, inputs)
    again, flops_again = spec_outputs.expected_and_flops(puzzle, inputs)
    assert computed == [name], "the second answer was read from disk"
    assert len(list(folder.glob(f"*{spec_outputs.SUFFIX}"))) == 1
    assert again.dtype == first.dtype and again.shape == first.shape and flops_again == flops
    assert first.tobytes() == again.tobytes()


def test_other_inputs_or_other_code_are_a_miss(folder, monkeypatch):
    puzzle, inputs = _case("outer_add")
    _, other_inputs = _case("outer_add", 1)
    computed = _computed_here(monkeypatch)
    spec_outputs.expected_and_flops(puzzle, inputs)
    spec_outputs.expected_and_flops(puzzle, other_inputs)
    changed = (inputs[0] + 1, *inputs[1:])
    spec_outputs.expected_and_flops(puzzle, changed)
    monkeypatch.setattr("pallas_puzzles.checking.cache.code_fingerprint", lambda folder: "a spec was edited")
    spec_outputs.expected_and_flops(puzzle, inputs)
    assert computed == ["outer_add"] * 4
    expected, _ = spec_outputs.expected_and_flops(puzzle, changed)
    np.testing.assert_array_equal(expected, specs.expected_and_flops(puzzle, changed)[0])


@pytest.mark.parametrize("damage", [lambda data: b"half a file", lambda data: data[:-1], lambda data: data + b"\0",
                                    lambda data: data.replace(b"float32", b"float64", 1)],
                         ids=["garbage", "cut short", "too long", "another dtype"])
def test_a_damaged_file_is_computed_again(folder, monkeypatch, damage):
    puzzle, inputs = _case("constant_add")
    right, _ = spec_outputs.expected_and_flops(puzzle, inputs)
    (stored,) = folder.glob(f"*{spec_outputs.SUFFIX}")
    stored.write_bytes(damage(stored.read_bytes()))
    computed = _computed_here(monkeypatch)
    again, _ = spec_outputs.expected_and_flops(puzzle, inputs)
    assert computed == ["constant_add"]
    np.testing.assert_array_equal(again, right)


def test_without_the_fast_path_nothing_is_read_or_written(folder, monkeypatch):
    puzzle, inputs = _case("constant_add")
    spec_outputs.expected_and_flops(puzzle, inputs)
    monkeypatch.setenv(fast_path.VARIABLE, "0")
    computed = _computed_here(monkeypatch)
    spec_outputs.expected_and_flops(puzzle, inputs)
    _, other_inputs = _case("constant_add", 1)
    spec_outputs.expected_and_flops(puzzle, other_inputs)
    assert computed == ["constant_add"] * 2
    assert len(list(folder.glob(f"*{spec_outputs.SUFFIX}"))) == 1


def test_a_folder_that_cannot_be_written_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PALLAS_PUZZLES_CACHE_DIR", str(blocker))
    monkeypatch.delenv(fast_path.VARIABLE, raising=False)
    puzzle, inputs = _case("constant_add")
    expected, _ = spec_outputs.expected_and_flops(puzzle, inputs)
    np.testing.assert_array_equal(expected, specs.expected_and_flops(puzzle, inputs)[0])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "bool", "int8", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(3, 5), (), (0, 4)])
def test_every_dtype_and_shape_is_stored_as_it_was(tmp_path, dtype, shape):
    import jax.numpy as jnp

    values = (np.arange(int(np.prod(shape))) % 7 - 3).reshape(shape).astype(jnp.dtype(dtype))
    path = tmp_path / f"answer{spec_outputs.SUFFIX}"
    spec_outputs._write(path, values, 12.5)
    back, flops = spec_outputs._read(path)
    assert back.dtype == values.dtype and back.shape == values.shape and flops == 12.5
    assert back.tobytes() == values.tobytes()


@pytest.mark.parametrize("puzzle", [p for p in COURSE.puzzles if p.cases_for(INTERPRET)], ids=lambda p: p.name)
def test_a_cases_inputs_are_placed_without_a_copy_and_hold_what_astype_gives(puzzle, monkeypatch):
    """jax.device_put wraps them instead of copying them (one copy of a case's inputs held, not two), nothing
    can write to them, and their bits are those the plain cast gives."""
    import jax

    sizes = puzzle.cases_for(INTERPRET)[-1]
    index = len(puzzle.cases_for(INTERPRET)) - 1
    held = specs.make_inputs(puzzle, sizes, index)
    monkeypatch.setattr(specs, "_held_for_placing", lambda values, dtype: values.astype(dtype))
    cast = specs.make_inputs(puzzle, sizes, index)
    for mine, plain in zip(held, cast, strict=True):
        assert mine.dtype == plain.dtype and mine.shape == plain.shape and mine.tobytes() == plain.tobytes()
        assert not mine.flags.writeable
        with jax.default_device(jax.devices("cpu")[0]):
            placed = jax.device_put(mine)
        assert mine.size == 0 or np.shares_memory(np.asarray(placed), mine), "placed by a copy"
