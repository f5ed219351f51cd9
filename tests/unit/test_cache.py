"""The result cache: each part of the key invalidates a stored verdict; nothing momentary is kept."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from helpers import COURSE

from pallas_puzzles import backends as backends_module
from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.checking import cache as cache_module
from pallas_puzzles.checking.cache import ResultCache, backend_identity, code_fingerprint
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, CheckResult, Finding
from pallas_puzzles.workspace.folder import Workspace

PUZZLE = COURSE.find("constant_add")


def verdict(passed: bool = False, *findings: Finding) -> CheckResult:
    return CheckResult(number=PUZZLE.number, name=PUZZLE.name, file="f.py", backend="interpret", passed=passed,
                       cases=[CaseResult("N0=3", passed)], findings=list(findings))


@pytest.fixture()
def space(tmp_path: Path) -> tuple[Workspace, Path]:
    (tmp_path / ".pallas_puzzles").mkdir()
    learner = tmp_path / "exercises" / PUZZLE.file
    learner.parent.mkdir()
    learner.write_text("x = 1\n")
    return Workspace(tmp_path), learner


def stored(workspace: Workspace, learner: Path, **options) -> CheckResult | None:
    cache = ResultCache(workspace, options.pop("requested", "interpret"), **options)
    return cache.get(cache.key(PUZZLE, learner), PUZZLE)


def store(workspace: Workspace, learner: Path, result: CheckResult, **options) -> None:
    cache = ResultCache(workspace, options.pop("requested", "interpret"), **options)
    cache.put(cache.key(PUZZLE, learner), PUZZLE, learner, result)


def test_a_stored_verdict_comes_back_for_the_same_file(space):
    workspace, learner = space
    assert stored(workspace, learner) is None
    store(workspace, learner, verdict(passed=True))
    again = stored(workspace, learner)
    assert again is not None and again.passed and again.cases[0].label == "N0=3"


def test_changing_the_file_bytes_invalidates(space):
    workspace, learner = space
    store(workspace, learner, verdict())
    learner.write_text("x = 2\n")
    assert stored(workspace, learner) is None
    learner.write_text("x = 1\n")  # saved back to the content already judged
    assert stored(workspace, learner) is not None


def test_the_same_bytes_at_another_path_are_another_key(space):
    workspace, learner = space
    store(workspace, learner, verdict())
    twin = learner.with_name("copy_" + learner.name)
    twin.write_bytes(learner.read_bytes())
    cache = ResultCache(workspace, "interpret")
    assert cache.key(PUZZLE, twin) != cache.key(PUZZLE, learner)


@pytest.mark.parametrize("change", ["code", "stub", "jax", "jaxlib", "python", "environment", "fast path off"])
def test_each_part_of_the_context_invalidates(space, monkeypatch, change):
    workspace, learner = space
    store(workspace, learner, verdict())
    assert stored(workspace, learner) is not None
    if change == "code":
        monkeypatch.setattr(cache_module, "code_fingerprint", lambda folder: "another checker")
    elif change == "stub":
        monkeypatch.setattr(cache_module, "_stub_bytes", lambda puzzle: b"another stub")
    elif change in ("jax", "jaxlib"):
        real = cache_module._version
        monkeypatch.setattr(cache_module, "_version", lambda name: "9.9.9" if name == change else real(name))
    elif change == "python":
        monkeypatch.setattr(sys, "version", "3.99.0 (another interpreter)")
    elif change == "environment":
        monkeypatch.setenv("JAX_ENABLE_X64", "1")
    else:
        monkeypatch.setenv("PALLAS_PUZZLES_FAST", "0")
    assert stored(workspace, learner) is None


@pytest.mark.parametrize("options", [
    {"mode": Mode.LOWER},
    {"fail_fast": False},
    {"requested": "gpu"},
    {"requested": "tpu"},
])
def test_backend_mode_and_options_invalidate(space, options):
    workspace, learner = space
    store(workspace, learner, verdict())
    assert stored(workspace, learner, **options) is None


def test_the_code_fingerprint_follows_every_source_file(tmp_path, monkeypatch):
    package = Path(cache_module.__file__).parents[1]
    copy = tmp_path / "pallas_puzzles"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    course = tmp_path / "course"
    shutil.copytree(PUZZLE.folder, course, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "__file__", str(copy / "checking" / "cache.py"))
    code_fingerprint.cache_clear()
    try:
        before = code_fingerprint(course)
        for changed in (copy / "engine" / "compare.py", course / "course.toml", course / "specs" / "long_sum.py"):
            code_fingerprint.cache_clear()
            with changed.open("a") as source:
                source.write("\n# a change\n")
            after = code_fingerprint(course)
            assert after != before, changed
            before = after
        code_fingerprint.cache_clear()
        (copy / "engine" / "new_module.py").write_text("x = 1\n")  # a new file counts
        assert code_fingerprint(course) != before
        before = code_fingerprint(course)
        for unread in (copy / "engine" / "__pycache__" / "compare.py", copy / "engine" / "notes.md"):
            code_fingerprint.cache_clear()  # bytecode folders and other kinds of file do not
            unread.parent.mkdir(exist_ok=True)
            unread.write_text("x = 2\n")
            assert code_fingerprint(course) == before, unread
    finally:
        code_fingerprint.cache_clear()


@pytest.mark.parametrize("kind", [FindingKind.TIMEOUT, FindingKind.CRASH, FindingKind.INTERNAL])
def test_momentary_verdicts_are_never_stored(space, kind):
    workspace, learner = space
    store(workspace, learner, verdict(False, Finding(kind, "it happened this time")))
    assert stored(workspace, learner) is None


def test_a_case_level_internal_finding_is_not_stored(space):
    workspace, learner = space
    result = verdict()
    result.cases = [CaseResult("N0=3", False, (Finding(FindingKind.INTERNAL, "cannot run here"),))]
    store(workspace, learner, result)
    assert stored(workspace, learner) is None


def test_a_file_saved_during_its_check_is_not_stored(space):
    workspace, learner = space
    cache = ResultCache(workspace, "interpret")
    key = cache.key(PUZZLE, learner)
    learner.write_text("x = 'saved while the checker ran'\n")
    cache.put(key, PUZZLE, learner, verdict())
    assert cache.get(key, PUZZLE) is None
    assert stored(workspace, learner) is None


def test_a_damaged_entry_is_a_miss_and_deleting_the_folder_is_safe(space):
    workspace, learner = space
    store(workspace, learner, verdict())
    for entry in (workspace.meta / "results").iterdir():
        entry.write_bytes(b"not a pickle")
    assert stored(workspace, learner) is None
    shutil.rmtree(workspace.meta / "results")
    assert stored(workspace, learner) is None
    store(workspace, learner, verdict())
    assert stored(workspace, learner) is not None


def test_an_unwritable_cache_only_costs_speed(space):
    workspace, learner = space
    (workspace.meta / "results").write_text("a file where the folder should be")
    store(workspace, learner, verdict())  # no error
    assert stored(workspace, learner) is None


def test_old_entries_are_pruned(space, monkeypatch):
    workspace, learner = space
    monkeypatch.setattr(cache_module, "MAX_ENTRIES", 3)
    for n in range(6):
        learner.write_text(f"x = {n}\n")
        store(workspace, learner, verdict())
    assert len(list((workspace.meta / "results").iterdir())) == 3
    assert stored(workspace, learner) is not None  # the newest is kept


def test_auto_is_cached_only_when_it_can_only_mean_interpret(monkeypatch):
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    monkeypatch.setattr(backends_module, "accelerator_plugins", lambda: ())
    assert backend_identity("auto", Mode.RUN) == INTERPRET.name
    monkeypatch.setattr(backends_module, "accelerator_plugins", lambda: ("jax-cuda12-plugin==0.12.0",))
    assert backend_identity("auto", Mode.RUN) is None  # only JAX can tell whether a GPU is there
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert backend_identity("auto", Mode.RUN) == INTERPRET.name
    assert backend_identity("gpu", Mode.RUN) != backend_identity("interpret", Mode.RUN)
    assert backend_identity("auto", Mode.LOWER) == "tpu-lowering"
