"""The answer comes from the learner's kernel (issue 31): what a cheating or confused learner would write in
puzzle 1's launcher is refused at its line, in the learner's words; what only arranges data passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE

from pallas_puzzles.backends import INTERPRET, TPU, Mode
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult

PUZZLE = COURSE.find("constant_add")
HEAD = PUZZLE.solution_path.read_text().partition("def constant_add(x")[0] + '''import numpy as np


def copy_kernel(a_ref, o_ref):
    o_ref[...] = a_ref[...]


def copy(a):
    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype))(a)


'''

OUTSIDE = {  # name: (launcher, the line it must name)
    "plain jnp": ("return x + 10.0", "return x + 10.0"),
    "jax.jit": ("return jax.jit(lambda v: v + 10.0)(x)", "return jax.jit("),
    "jax.vmap": ("return jax.vmap(lambda v: v + 10.0)(x)", "return jax.vmap("),
    "lax before a copy": ("return copy(jax.lax.add(x, 10.0))", "return copy(jax.lax.add"),
    "jnp after the kernel": ("return copy(x) + 10.0", "return copy(x) + 10.0"),
    "jnp.where": ("return copy(jnp.where(x > -1e9, x + 10.0, x))", "return copy(jnp.where"),
    "numpy on the host": ("return copy(np.asarray(x) + 10.0)", "return copy(np.asarray(x)"),
    "pure_callback": ("return jax.pure_callback(lambda v: np.asarray(v) + 10.0, "
                      "jax.ShapeDtypeStruct(x.shape, x.dtype), x)", "return jax.pure_callback("),
    "aliased buffer": ("return pl.pallas_call(lambda a_ref, o_ref: None, out_shape=jax.ShapeDtypeStruct("
                       "x.shape, x.dtype), input_output_aliases={0: 0})(x + 10.0)", "return pl.pallas_call("),
    "input ignored": ("return pl.pallas_call(lambda x_ref, a_ref, o_ref: o_ref.__setitem__(..., a_ref[...]), "
                      "out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, x + 10.0)", "return pl.pallas_call("),
    "bf16 round trip": ("return copy(x.astype(jnp.bfloat16).astype(jnp.float32) + 10.0)", "return copy(x.astype"),
}
REACHES = {
    "imports the spec": ("from pallas_puzzles.engine import specs  # noqa\n    return copy(x)",
                         "from pallas_puzzles.engine import specs"),
    "import by name": ("import importlib\n    return copy(x)", "import importlib"),
    "walks the stack": ("import sys\n    f = sys._getframe(1)\n    return copy(x)", "f = sys._getframe(1)"),
    "reads the solution": (f"open({str(PUZZLE.solution_path)!r}).read()\n    return copy(x)", "open("),
    "reads the spec": (f"open({str(PUZZLE.spec_path)!r}).read()\n    return copy(x)", "open("),
}
PASSES = {
    "jitted launcher": "return jax.jit(lambda v: pl.pallas_call(constant_add_kernel, "
                       "out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype))(v))(x)",
    "views around the call": "return pl.pallas_call(constant_add_kernel, out_shape=jax.ShapeDtypeStruct("
                             "(1, x.shape[0]), x.dtype))(x.reshape(1, -1)).reshape(-1)",
    "pad then slice": "return pl.pallas_call(constant_add_kernel, out_shape=jax.ShapeDtypeStruct((x.shape[0] + 3,), "
                      "x.dtype))(jnp.pad(x, (0, 3)))[: x.shape[0]]",
    "device_put": "return pl.pallas_call(constant_add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))("
                  "jax.device_put(x))",
}


def _check(tmp_path: Path, body: str, mode: Mode = Mode.RUN) -> CheckResult:
    file = tmp_path / PUZZLE.file
    file.write_text(HEAD + f"def constant_add(x):\n    {body}\n")
    return check_puzzle(PUZZLE, file, TPU if mode is Mode.LOWER else INTERPRET, mode)


def _named(result: CheckResult, kind: FindingKind, line: str) -> str:
    assert not result.passed and result.kind is kind, (result.kind, result.finding)
    finding = result.finding or result.first_failure.finding
    assert any(where.text.startswith(line) for where in finding.where), finding.where
    return finding.message


@pytest.mark.parametrize("name", OUTSIDE)
def test_arithmetic_outside_the_kernel_is_refused_at_the_launcher_line(tmp_path: Path, name: str):
    body, line = OUTSIDE[name]
    message = _named(_check(tmp_path, body), FindingKind.OUTSIDE_KERNEL, line)
    assert "kernel" in message and "site-packages" not in message and "pallas_puzzles" not in message


@pytest.mark.parametrize("name", REACHES)
def test_a_file_that_reaches_into_the_checker_is_refused_at_its_line(tmp_path: Path, name: str):
    body, line = REACHES[name]
    _named(_check(tmp_path, body), FindingKind.REACHES_CHECKER, line)


@pytest.mark.parametrize("name", PASSES)
def test_a_launcher_that_only_arranges_data_passes(tmp_path: Path, name: str):
    result = _check(tmp_path, PASSES[name])
    assert result.passed, (result.kind, result.finding or result.first_failure)


def test_the_lowering_check_refuses_an_answer_computed_outside_the_kernel(tmp_path: Path):
    _named(_check(tmp_path, "return copy(x + 10.0)", Mode.LOWER), FindingKind.OUTSIDE_KERNEL, "return copy(x + 10.0)")


def test_a_kernel_from_another_file_is_not_the_learners(tmp_path: Path):
    (tmp_path / "borrowed.py").write_text("def add_ten(x_ref, z_ref):\n    z_ref[...] = x_ref[...] + 10.0\n")
    body = (f"import sys\n    sys.path.insert(0, {str(tmp_path)!r})\n    from borrowed import add_ten\n"
            "    return pl.pallas_call(add_ten, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)")
    message = _named(_check(tmp_path, body), FindingKind.OUTSIDE_KERNEL, "return pl.pallas_call(add_ten")
    assert "add_ten is not yours" in message and "borrowed.py" in message
