"""Backend selection, the JAX version gate, the TPU lowering check and doctor."""

from __future__ import annotations

import pytest
from helpers import COURSE

from pallas_puzzles import backends
from pallas_puzzles.backends import GPU, INTERPRET, TPU, Mode
from pallas_puzzles.errors import UserError


@pytest.fixture()
def devices(monkeypatch):
    """Pretend JAX sees the given accelerator platforms; count how often it is asked."""
    chosen: dict[str, object] = {"present": set(), "asked": 0}

    def platforms() -> set[str]:
        chosen["asked"] = int(chosen["asked"]) + 1
        return set(chosen["present"])

    monkeypatch.setattr(backends, "_present", platforms)
    return chosen


@pytest.mark.parametrize("present, expected", [(set(), "interpret"), ({"gpu"}, "gpu"), ({"tpu"}, "tpu")])
def test_auto_picks_the_accelerator_jax_sees(devices, present, expected):
    devices["present"] = present
    assert backends.resolve("auto").name == expected
    assert devices["asked"] == 1


@pytest.mark.parametrize("backend, mode, expected", [
    (INTERPRET, Mode.RUN, "tpu-interpret"), (GPU, Mode.RUN, "device"), (TPU, Mode.RUN, "device"),
    (TPU, Mode.LOWER, "tpu-lowering")])
def test_a_chapter_runs_through_its_targets_partner_on_each_backend(backend, mode, expected):
    from pallas_puzzles.engine import targets

    assert targets.partner_name("tpu-interpret", backend, mode) == expected
    assert targets.for_check("tpu-interpret", backend, mode).name == expected


def test_interpret_and_lowering_never_ask_for_devices(devices):
    devices["present"] = {"gpu"}
    assert backends.resolve("interpret") is INTERPRET
    assert backends.resolve("auto", Mode.LOWER) is TPU
    assert devices["asked"] == 0


@pytest.mark.parametrize("version, error, warning", [
    ("0.9.0", True, False), ("0.10.1", True, False), ("0.10.2", False, False),
    ("0.11.3", False, False), ("0.12.0.1", False, False), ("0.13.0", False, True),
])
def test_jax_version_gate(version, error, warning):
    found_error, found_warning = backends.jax_version_verdict(version)
    assert bool(found_error) == error and bool(found_warning) == warning
    if error:
        assert "pip install" in found_error


def test_unknown_backend_is_refused():
    with pytest.raises(UserError):
        backends.validate("metal")


def test_a_puzzle_that_cannot_run_on_a_backend_says_so():
    from pallas_puzzles.checking.support import require as require_support

    no_gpu = next(p for p in COURSE.puzzles if not p.supports(GPU))
    with pytest.raises(UserError) as caught:
        require_support(no_gpu, GPU)
    assert f"Puzzle {no_gpu.number}" in caught.value.message and "runs on: interpret" in caught.value.message
    tpu_idiom = next(p for p in COURSE.puzzles if p.tpu_only_idiom)
    with pytest.raises(UserError) as caught:
        require_support(tpu_idiom, GPU)
    assert tpu_idiom.tpu_only_idiom in caught.value.message




@pytest.mark.parametrize("requested, mode, expected", [
    ("gpu", Mode.RUN, "false"), ("auto", Mode.RUN, "false"), ("interpret", Mode.RUN, None),
    ("tpu", Mode.LOWER, None)])
def test_checkers_that_may_use_a_gpu_do_not_take_its_memory_up_front(monkeypatch, requested, mode, expected):
    """JAX preallocates 75% of a GPU's memory, so a second checker on the same GPU would run out of it."""
    from pallas_puzzles import environment

    monkeypatch.delenv(environment.GPU_PREALLOCATE.name, raising=False)
    monkeypatch.setenv(environment.JAX_PLATFORMS.name, "cpu")  # the CPU-only checks set it; keep it set
    monkeypatch.setattr(backends, "use_checker_xla_flags", lambda: None)  # XLA_FLAGS: not this test's
    backends.prepare_environment(requested, mode)
    assert environment.GPU_PREALLOCATE.value() == (expected or "")


def test_a_preallocation_setting_of_ones_own_wins(monkeypatch):
    from pallas_puzzles import environment

    monkeypatch.setenv(environment.GPU_PREALLOCATE.name, "true")
    monkeypatch.setattr(backends, "use_checker_xla_flags", lambda: None)
    backends.prepare_environment("gpu", Mode.RUN)
    assert environment.GPU_PREALLOCATE.value() == "true"
