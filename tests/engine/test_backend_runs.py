"""Backend selection, the JAX version gate, the TPU lowering check and doctor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import COURSE, checked_by_dev_check, puzzles_checked

from pallas_puzzles import backends
from pallas_puzzles.backends import INTERPRET, TPU, Mode
from pallas_puzzles.cli import app
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind

REPO = Path(__file__).resolve().parents[2]
TPU_PUZZLES = [p for p in COURSE.puzzles if p.supports(TPU)]


@pytest.fixture()
def devices(monkeypatch):
    """Pretend JAX sees the given accelerator platforms; count how often it is asked."""
    chosen: dict[str, object] = {"present": set(), "asked": 0}

    def platforms() -> set[str]:
        chosen["asked"] = int(chosen["asked"]) + 1
        return set(chosen["present"])

    monkeypatch.setattr(backends, "_present", platforms)
    return chosen


@pytest.mark.parametrize("backend, fragment", [("gpu", 'pip install -U "jax[cuda12]"'),
                                               ("tpu", "pallas-puzzles lower N")])
def test_a_missing_backend_names_what_is_missing_and_the_fix(devices, backend, fragment):
    with pytest.raises(UserError) as caught:
        backends.resolve(backend)
    message = caught.value.message
    assert f"--backend {backend} needs a {backend.upper()}" in message and fragment in message
    assert message.count("\n") == 0


def test_the_device_target_chooses_the_triton_lowering_for_pallas_call(monkeypatch):
    """Compiled pallas_call chapters ride Pallas's Triton lowering on a GPU (README: Backends)."""
    import jax

    from pallas_puzzles.engine.targets.device import Device

    updates: list[tuple[str, object]] = []
    monkeypatch.setattr(jax.config, "update", lambda name, value: updates.append((name, value)))
    Device().start()
    assert ("jax_pallas_use_mosaic_gpu", False) in updates


def test_installed_jax_passes_the_gate():
    import jax

    assert backends.jax_version_verdict(jax.__version__)[0] is None


def test_every_tpu_capable_solution_lowers_for_a_tpu(course_check):
    """dev check lowers every TPU-capable solution (the session's check of the course)."""
    lowered = checked_by_dev_check(course_check, "lowering")
    assert set(lowered) == {p.name for p in TPU_PUZZLES if p.name in puzzles_checked(course_check)}
    for name, result in lowered.items():
        assert result.passed and result.mode == Mode.LOWER.value, [(c.label, c.finding) for c in result.cases]
        assert len(result.cases) == len(COURSE.find(name).cases_for(TPU))


def test_illegal_tpu_block_shapes_fail_the_lowering_check_clearly(tmp_path):
    puzzle = COURSE.find("tiled_transpose")
    source = (REPO / "solutions" / puzzle.file).read_text()
    assert "BM = 128" in source
    bad = tmp_path / puzzle.file
    bad.write_text(source.replace("BM = 128", "BM = 100"))
    result = check_puzzle(puzzle, bad, TPU, Mode.LOWER)
    assert not result.passed
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.TPU_LOWERING
    assert "would not compile for a TPU" in finding.message
    assert finding.message.endswith((".", "(…)"))  # Mosaic's words end with a sentence, not mid-word
    assert "array shape (256, 512), a" not in finding.message or "array shape (256, 512), and" in finding.message
    assert "multiples of 8 and 128" in finding.explanation
    # The same kernel still passes on the interpreter: the rule is the TPU's, not Pallas's.
    assert check_puzzle(puzzle, bad, INTERPRET, fail_fast=False).passed


def test_lower_command_passes_a_solution_and_rejects_a_bad_block(workspace, cli):
    assert cli.invoke(app, ["lower", "tiled_transpose", "--solutions"]).exit_code == 0
    exercise = workspace / "exercises" / "13_tiled_transpose.py"
    shutil.copyfile(REPO / "solutions" / "13_tiled_transpose.py", exercise)
    exercise.write_text(exercise.read_text().replace("BM = 128", "BM = 100"))
    result = cli.invoke(app, ["lower", "tiled_transpose"])
    assert result.exit_code == 1
    assert "would not compile for a TPU" in " ".join(result.output.split())


def test_doctor_reports_jax_the_backend_and_the_cache(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PALLAS_PUZZLES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "250")
    result = cli.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    for item in ("jax", "jaxlib", "auto backend", "interpret", "compile cache", str(tmp_path / "cache"),
                 "file watcher", "workspace"):
        assert item in result.output
    assert "Everything needed is in place" in result.output


def test_doctor_fails_with_a_fix_for_an_old_jax(cli, tmp_path, monkeypatch):
    import jax

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(jax, "__version__", "0.9.1")
    result = cli.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "pip install -U" in result.output
