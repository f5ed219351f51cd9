"""What Pallas's Triton lowering refuses, found on the CPU before a GPU sees it.

`--backend gpu` compiles the pallas_call chapters with Triton, and the Triton lowering
(jax/_src/pallas/triton/lowering.py) runs in Python when a kernel is lowered: lowered for CUDA for
an abstract H100 here, a kernel Triton cannot take fails as it would on the GPU. A GPU refused the
tour (`pl.debug_print() does not support placeholders when lowering to Triton`), the GPU check's
endless kernel (`AssertionError: ('i32', 'i1')`) and a TPU-only correct alternative of puzzle 23
(a bare `AssertionError`: no GPU lowering for pltpu.CompilerParams); each fails here too. This stops
short of Triton's compiler and ptxas, so a kernel that lowers here can still be refused on a GPU.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import COURSE, REPO

from pallas_puzzles import backends
from pallas_puzzles.backends import Mode
from pallas_puzzles.dev import examples
from pallas_puzzles.engine import specs, targets
from pallas_puzzles.engine.checker import load_learner_module

# The pallas_call chapters that --backend gpu hands to the `device` target: Triton compiles them.
ON_TRITON = [p for p in COURSE.puzzles if p.supports(backends.GPU)
             and targets.partner_name(p.target, backends.GPU, Mode.RUN) == "device"]
CORRECT = [e for e in examples.load(COURSE.folder, examples.CORRECT) if e.puzzle in {p.name for p in ON_TRITON}]


@contextlib.contextmanager
def for_an_h100() -> Iterator[None]:
    """Lower with Triton for an abstract H100, as the checker's `device` target compiles on a GPU."""
    import jax

    saved = getattr(jax.config, "jax_pallas_use_mosaic_gpu", None)  # jax 0.10: Mosaic GPU by default
    if saved is not None:
        jax.config.update("jax_pallas_use_mosaic_gpu", False)
    device = jax.sharding.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=1, platform="gpu")
    try:
        with warnings.catch_warnings(), jax.sharding.use_abstract_mesh(
                jax.sharding.AbstractMesh((1,), ("gpu",), abstract_device=device)):
            warnings.filterwarnings("ignore", message=".*Pallas Triton backend is deprecated.*")
            yield
    finally:
        if saved is not None:
            jax.config.update("jax_pallas_use_mosaic_gpu", saved)


def lower_for_cuda(entry: Callable[..., Any], puzzle_name: str) -> None:
    """Lower `entry` for CUDA with its puzzle's first GPU shape case; raises what Triton refuses."""
    import jax

    puzzle = COURSE.find(puzzle_name)
    inputs = specs.make_inputs(puzzle, puzzle.cases_for(backends.GPU)[0], 0)
    with for_an_h100():
        jax.jit(entry).trace(*(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs)).lower(
            lowering_platforms=("cuda",))


def entry_of(path: Path, puzzle_name: str) -> Callable[..., Any]:
    return getattr(load_learner_module(path), COURSE.find(puzzle_name).entry)


@pytest.fixture(scope="module", autouse=True)
def triton_lowers_here() -> None:
    """Skip where this jax cannot lower for CUDA on a CPU (no abstract devices, no Triton dialect)."""
    try:
        lower_for_cuda(entry_of(COURSE.find("constant_add").solution_path, "constant_add"), "constant_add")
    except Exception as exc:  # a limit of this jax, not of a kernel: the reference kernel is the plainest
        pytest.skip(f"this jax cannot lower a pallas_call for CUDA on a CPU ({type(exc).__name__}: {exc})")


@pytest.mark.parametrize("puzzle", ON_TRITON, ids=lambda p: p.label)
def test_the_reference_solution_lowers_for_triton(puzzle):
    lower_for_cuda(entry_of(puzzle.solution_path, puzzle.name), puzzle.name)


@pytest.mark.parametrize("alternative", CORRECT, ids=lambda e: e.name)
def test_a_correct_alternative_lowers_for_triton(alternative, tmp_path):
    """A correct alternative must pass on every backend its puzzle runs on, a GPU's Triton included."""
    lower_for_cuda(entry_of(examples.build(alternative, COURSE, tmp_path), alternative.puzzle), alternative.puzzle)


def test_the_gpu_checks_endless_kernel_lowers_for_triton_and_loops_on_what_it_reads(tmp_path):
    """scripts/gpu_check.py's hang step must reach the GPU: a loop whose condition reads x_ref (so no
    compiler can prove it ends, or drop it) and whose body stores."""
    import jax

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import gpu_hang
    finally:
        sys.path.remove(str(REPO / "scripts"))
    endless = gpu_hang.endless_kernel(COURSE.find("constant_add").solution_path.read_text(encoding="utf-8"))
    assert endless is not None, "the constant_add solution no longer has the line the hang step edits"
    path = tmp_path / "01_constant_add.py"
    path.write_text(endless, encoding="utf-8")
    entry = entry_of(path, "constant_add")
    lower_for_cuda(entry, "constant_add")

    (call,) = [e for e in jax.make_jaxpr(entry)(jax.numpy.zeros(32)).jaxpr.eqns if e.primitive.name == "pallas_call"]
    (loop,) = [e for e in call.params["jaxpr"].eqns if e.primitive.name == "while"]
    assert "get" in {e.primitive.name for e in loop.params["cond_jaxpr"].jaxpr.eqns}  # reads x_ref
    assert "swap" in {e.primitive.name for e in loop.params["body_jaxpr"].jaxpr.eqns}  # stores into z_ref
