"""What makes a check start and compile fast: tested XLA flags only, no GPU interpreter, a quick exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from pallas_puzzles.backends import (
    FAST_COMPILE_FLAGS,
    STRICT_PRECISION_XLA_FLAG,
    fast_compile_flags,
    strict_precision_flags,
    with_flags,
)

SRC = Path(__file__).resolve().parents[2] / "src"


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(SRC), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=environment)


@pytest.mark.parametrize(("version", "tested"), [
    ("0.10.2", True), ("0.12.0.1", True), ("0.11.0", False), ("0.13.0", False), ("0.9.0", False), (None, False),
])
def test_flags_only_for_tested_jaxlib_releases(version, tested):
    assert bool(fast_compile_flags(version)) == tested


@pytest.mark.parametrize(("version", "tested"), [
    ("0.10.2", True), ("0.12.0.1", True), ("0.11.0", False), (None, False),
])
def test_library_reductions_are_turned_off_only_where_the_flag_was_tested(version, tested):
    flags = strict_precision_flags(version)
    assert flags[0] == STRICT_PRECISION_XLA_FLAG  # known to every supported jaxlib
    assert any("ynn_fusion_type" in flag for flag in flags) == tested


def test_the_fusion_emitter_switch_is_never_given_to_jaxlib_0_12_which_aborts_on_it():
    assert not any("fusion_emitters" in flag for flag in FAST_COMPILE_FLAGS[(0, 12)])


def test_a_users_own_xla_flags_win():
    merged = with_flags("--xla_backend_optimization_level=3 --xla_dump_to=/tmp/x",
                        ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true"))
    assert merged.split() == ["--xla_backend_optimization_level=3", "--xla_dump_to=/tmp/x",
                              "--xla_llvm_disable_expensive_passes=true"]
    assert with_flags("", ()) == ""


def test_this_legs_jaxlib_compiles_with_the_flags_it_is_given():
    """An unknown XLA flag aborts the process at its first compile: this leg must survive one."""
    done = run_python("""
        import os
        from pallas_puzzles import backends
        backends.prepare_environment("interpret", backends.Mode.RUN)
        import jax
        print(os.environ["XLA_FLAGS"])
        print(int(jax.jit(lambda x: x * 2 + 1)(20)))
    """, XLA_FLAGS="")
    assert done.returncode == 0, done.stderr[-2000:]
    flags_line, value = done.stdout.split("\n")[:2]
    assert value == "41"
    jaxlib = metadata.version("jaxlib")
    assert flags_line.split() == [*strict_precision_flags(jaxlib), *fast_compile_flags(jaxlib)]


def test_the_flags_can_be_turned_off():
    done = run_python("""
        import os
        from pallas_puzzles import backends
        backends.use_checker_xla_flags()
        print(repr(os.environ.get("XLA_FLAGS", "")))
    """, XLA_FLAGS="", PALLAS_PUZZLES_FAST_COMPILE="0")
    precision = " ".join(strict_precision_flags(metadata.version("jaxlib")))
    assert done.stdout.strip() == repr(precision)  # precision is not a speed option


def test_the_interpret_backend_never_loads_the_gpu_interpreter():
    done = run_python("""
        import sys
        from pallas_puzzles.backends import Mode
        from pallas_puzzles.worker.child import _start
        assert _start("tpu-interpret", "interpret", Mode.RUN)[0].backend == "interpret"
        import jax, jax.numpy as jnp
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import tpu as pltpu

        def kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0

        call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32),
                              interpret=pltpu.InterpretParams())
        print(float(call(jnp.zeros(8))[0]))
        gpu_interpreter = ("jax.experimental.mosaic.gpu", "jax._src.pallas.mosaic_gpu.core",
                           "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call")
        print([m for m in sys.modules if m.startswith(gpu_interpreter) and sys.modules[m] is not None])
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["1.0", "[]"]


