"""The Mosaic GPU target beyond the course's mistakes.toml: the promises of issue 20 that no single
chapter mistake shows (a hang stopped in seconds, a clean check after a failure, rules of
kernels outside the chapter, the GPU backend's compiler), and the chapter on an older jax.

Checks run in this process, as in test_mistakes.py; the chapter needs jax >= 0.12, so on the
jax 0.10 leg only the tests that need no GPU interpreter run.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake, skip_if_jax_too_old

from pallas_puzzles.backends import GPU, INTERPRET
from pallas_puzzles.dev import examples
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind

CHAPTER = [p for p in COURSE.puzzles if p.chapter == "mosaic_gpu"]
TMA_COPY = COURSE.find("tma_copy")


def _checked(edits: list[tuple[str, str]], tmp_path: Path, puzzle=TMA_COPY, name: str = "variant"):
    skip_if_jax_too_old(puzzle)
    return check_puzzle(puzzle, build_mistake(_variant(puzzle, name, edits), tmp_path), INTERPRET)


def _variant(puzzle, name: str, edits: list[tuple[str, str]]) -> examples.Example:
    return examples.Example(name=name, puzzle=puzzle.name, why="a variant written by this test",
                            edits=tuple(examples.Edit(old, new) for old, new in edits), must_pass=False)


def _mistake(name: str) -> examples.Example:
    return next(m for m in MISTAKES if m.name == name)


@pytest.mark.parametrize("name", ["p37_two_arrivals_one_copy", "p42_consumer_never_releases"])
def test_a_barrier_wait_that_can_never_finish_stops_within_seconds(name: str, tmp_path: Path):
    """The interpreter alone waits for ever; the whole check (trace, lowering, run) ends in under 5 s."""
    mistake = _mistake(name)
    puzzle = COURSE.find(mistake.puzzle)
    skip_if_jax_too_old(puzzle)
    path = build_mistake(mistake, tmp_path)
    check_puzzle(puzzle, path, INTERPRET)  # warm: JAX has traced this kind of kernel once
    started = time.perf_counter()
    result = check_puzzle(puzzle, path, INTERPRET)
    assert time.perf_counter() - started < 5.0
    assert result.kind is FindingKind.BARRIER_STALL
    assert any(mistake.line in line.text for line in result.first_failure.finding.where)


def test_after_a_stall_and_a_race_the_next_check_runs_clean(tmp_path: Path):
    skip_if_jax_too_old(TMA_COPY)
    for name in ("p37_waits_twice", "p37_no_barrier_wait", "p37_no_store_wait"):
        failed = check_puzzle(TMA_COPY, build_mistake(_mistake(name), tmp_path), INTERPRET)
        assert not failed.passed
        assert check_puzzle(TMA_COPY, TMA_COPY.solution_path, INTERPRET, fail_fast=False).passed


def test_arrivals_no_wait_consumed_are_named_at_the_copy(tmp_path: Path):
    """num_arrivals=2, one copy, no wait: the kernel ends with an arrival pending on the barrier."""
    result = _checked([
        ("            plgpu.Barrier(num_arrivals=1),\n", "            plgpu.Barrier(num_arrivals=2),\n"),
        ("    plgpu.barrier_wait(barrier)\n    z_smem[...] = 2.0 * x_smem[...] + 1.0\n",
         "    z_smem[...] = 2.0 * x_gmem[...] + 1.0\n"),
    ], tmp_path)
    assert result.kind is FindingKind.BARRIER_PHASE
    finding = result.first_failure.finding
    assert "1 of the 2 arrivals" in finding.message
    assert "copy_gmem_to_smem(x_gmem, x_smem, barrier)" in finding.where[0].text


def test_vector_code_in_one_warp_is_refused_by_the_cuda_lowering(tmp_path: Path):
    """The interpreter runs per-warp vector copies; only a GPU (here its lowering) refuses them."""
    per_warp = """\
    def per_warp():
        share = x_smem.shape[0] // 4
        rows = pl.ds(jax.lax.axis_index("warp") * share, share)
        z_smem[rows] = 2.0 * x_smem[rows] + 1.0

    pl.kernel(per_warp, mesh=plgpu.WarpMesh(axis_name="warp"))()
"""
    result = _checked([("    z_smem[...] = 2.0 * x_smem[...] + 1.0\n", per_warp),
                       ("import jax\n", "import jax\nfrom jax.experimental import pallas as pl\n")], tmp_path)
    assert result.kind is FindingKind.GPU_LOWERING
    finding = result.first_failure.finding
    assert "warp" in finding.message and "WarpMesh" in finding.explanation
    assert any("z_smem[rows] = 2.0 * x_smem[rows] + 1.0" in line.text for line in finding.where)


def test_num_programs_is_refused_like_program_id(tmp_path: Path):
    result = _checked([("    z_smem[...] = 2.0 * x_smem[...] + 1.0\n",
                        "    z_smem[...] = 2.0 * x_smem[...] + pl.num_programs(0)\n"),
                       ("import jax\n", "import jax\nfrom jax.experimental import pallas as pl\n")], tmp_path)
    assert result.kind is FindingKind.GPU_PROGRAM_ID
    assert "pl.num_programs(0)" in result.first_failure.finding.where[0].text


def test_a_race_with_emit_pipelines_own_copy_says_jax_made_it(tmp_path: Path):
    """An input-only pipeline whose body reads its slot with ordinary loads and commits nothing: the
    pipeline's next copy into that slot races with the read (commit_smem at the end of the body fixes it)."""
    puzzle = COURSE.find("ragged_rows")
    skip_if_jax_too_old(puzzle)
    correct = examples.load(COURSE.folder, examples.CORRECT)
    entry = next(c for c in correct if c.name == "p38_one_block_with_emit_pipeline")
    edits = [(e.old, e.new) for e in entry.edits]
    edits[0] = (edits[0][0], edits[0][1].replace(
        "    def step(indices, x_smem, z_smem):\n        z_smem[...] = jnp.maximum(x_smem[...], 0.0) + 1.0\n",
        "    def step(indices, x_smem):\n        (i,) = indices\n"
        "        z_gmem[pl.ds(i * BR, BR)] = jnp.maximum(x_smem[...], 0.0) + 1.0\n").replace(
        "        out_specs=[plgpu.BlockSpec((BR, c), lambda i: (i, 0))],\n", "").replace(
        ")(x_gmem, z_gmem)", ")(x_gmem)"))
    result = check_puzzle(puzzle, build_mistake(_variant(puzzle, "pipeline_race", edits), tmp_path), INTERPRET)
    assert result.kind is FindingKind.SMEM_SLOT_IN_USE
    finding = result.first_failure.finding
    assert "not a line of yours" in finding.message
    assert any("jnp.maximum(x_smem[...], 0.0)" in line.text for line in finding.where)


@pytest.mark.parametrize("puzzle", CHAPTER, ids=[p.name for p in CHAPTER])
def test_every_solution_compiles_with_mosaic_gpu_for_cuda(puzzle):
    """--backend gpu compiles this chapter with Mosaic GPU, not Triton: lowered for CUDA here (no GPU),
    each solution becomes one Mosaic GPU kernel per plgpu.kernel call."""
    skip_if_jax_too_old(puzzle)
    import jax

    from pallas_puzzles.engine import specs
    from pallas_puzzles.engine.checker import load_learner_module

    entry = getattr(load_learner_module(puzzle.solution_path), puzzle.entry)
    inputs = specs.make_inputs(puzzle, puzzle.cases_for(GPU)[0], 0)
    text = jax.jit(entry).trace(*inputs).lower(lowering_platforms=("cuda",)).as_text()
    assert "custom_call @mosaic_gpu" in text
    assert "triton" not in text.lower()


@pytest.mark.parametrize("slow", ["_get", "copy_gmem_to_smem"], ids=["consumer_reads_late", "producer_copies_late"])
def test_a_refill_without_room_is_named_so_whichever_warpgroup_runs_first(slow: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """The interpreter runs each warpgroup in a thread and each TMA copy as a task of its own, so a producer
    that refills a slot without waiting for room races with the consumer's read in either order: the read
    first, or the refill first. Hardware is as free. Both orders are the same mistake and get the same finding
    (CI once saw the second order called a read before the wait)."""
    mistake = _mistake("p42_producer_does_not_wait_for_room")
    puzzle = COURSE.find(mistake.puzzle)
    skip_if_jax_too_old(puzzle)
    from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks

    check_puzzle(puzzle, puzzle.solution_path, INTERPRET)  # installs the checker's hooks first
    hooked = getattr(gpu_callbacks, slow)
    warpgroup = 1 if slow == "_get" else 0

    def late(*args, **kwargs):
        location = kwargs.get("mesh_location") or next((a for a in args[:3] if hasattr(a, "thread_id")), None)
        if location is not None and int(location.thread_id) == warpgroup:
            time.sleep(0.02)
        return hooked(*args, **kwargs)

    monkeypatch.setattr(gpu_callbacks, slow, late)
    result = check_puzzle(puzzle, build_mistake(mistake, tmp_path), INTERPRET)
    assert result.kind is FindingKind.SMEM_SLOT_IN_USE, result.first_failure.finding.message
    assert any(mistake.line in line.text for line in result.first_failure.finding.where)




WARP_SPECIALIZED = COURSE.find("warp_specialized")
# Two-warpgroup mistakes whose finding (which access found the race, so which lines in which order)
# changed from run to run while the operating system chose the interleaving (8 runs each: 4 and 4,
# 7 and 1, measured before the warpgroups took turns).
UNSCHEDULED_FLAKY = {
    "consumer_skips_the_wait": [("            plgpu.barrier_wait(full.at[slot])\n", "")],
    "consumer_releases_first": [
        ("            acc = acc + bufs[slot]\n            plgpu.commit_smem()\n", ""),
        ("            plgpu.barrier_arrive(empty.at[slot])\n", "            plgpu.barrier_arrive(empty.at[slot])\n"
                                                          "            acc = acc + bufs[slot]\n"
                                                          "            plgpu.commit_smem()\n")],
}


@pytest.mark.parametrize("name", sorted(UNSCHEDULED_FLAKY))
def test_warpgroups_take_turns_so_a_file_gets_the_same_finding_every_time(name: str, tmp_path: Path):
    skip_if_jax_too_old(WARP_SPECIALIZED)
    path = build_mistake(_variant(WARP_SPECIALIZED, name, UNSCHEDULED_FLAKY[name]), tmp_path)
    seen = set()
    for _ in range(4):
        finding = check_puzzle(WARP_SPECIALIZED, path, INTERPRET).first_failure.finding
        seen.add((finding.kind, finding.message, tuple(line.line for line in finding.where)))
    assert len(seen) == 1, seen


def test_one_warpgroup_runs_once_and_two_run_in_every_schedule(monkeypatch: pytest.MonkeyPatch):
    """A block of one warpgroup has one interleaving; a producer and a consumer get three per case."""
    skip_if_jax_too_old(WARP_SPECIALIZED)
    from pallas_puzzles.engine.targets.mosaic_gpu.schedule import TURNS

    runs: list[str] = []
    begin = TURNS.begin
    monkeypatch.setattr(TURNS, "begin", lambda plan: (runs.append(plan.name), begin(plan))[1])
    assert check_puzzle(TMA_COPY, TMA_COPY.solution_path, INTERPRET).passed
    assert len(runs) == len(TMA_COPY.cases_for(INTERPRET))
    runs.clear()
    assert check_puzzle(WARP_SPECIALIZED, WARP_SPECIALIZED.solution_path, INTERPRET).passed
    assert runs == ["lowest thread first", "highest thread first", "shuffled"] * len(
        WARP_SPECIALIZED.cases_for(INTERPRET))


def test_a_wgmma_left_running_at_the_end_is_named(tmp_path: Path):
    """Nothing reads the accumulator or waits: the tensor cores may still read SMEM as the kernel ends."""
    puzzle = COURSE.find("wgmma_matmul")
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, build_mistake(_variant(puzzle, "never_waited", [
        ("        plgpu.wgmma_wait(0)\n        return acc_ref[...]\n", ""),
        ("    z_smem[...] = pl.run_scoped(multiply, plgpu.ACC((TM, TN), jnp.float32))\n",
         "    pl.run_scoped(multiply, plgpu.ACC((TM, TN), jnp.float32))\n    z_smem[...] = jnp.zeros_like(z_smem)\n"),
    ]), tmp_path), INTERPRET)
    assert result.kind is FindingKind.WGMMA_IN_FLIGHT
    finding = result.first_failure.finding
    assert "ended while the wgmma" in finding.message
    assert "plgpu.wgmma(acc_ref, a_smem, b_smem)" in finding.where[0].text


def test_a_layout_search_that_cannot_succeed_is_refused_in_seconds(tmp_path: Path):
    """The q window moved off its 8-row tiles: Mosaic GPU finds no layout, after a minute of search on a
    slow machine with its own limit (a timeout here); with the checker's, in seconds, and the same answer."""
    puzzle = COURSE.find("hopper_attention")
    skip_if_jax_too_old(puzzle)
    path = build_mistake(_variant(puzzle, "q_one_row_late", [(
        '    rows = pl.ds(jax.lax.axis_index("q") * BQ, BQ)\n',
        '    rows = pl.ds(jax.lax.axis_index("q") * BQ + 1, BQ)\n')]), tmp_path)
    started = time.perf_counter()
    result = check_puzzle(puzzle, path, INTERPRET)
    assert time.perf_counter() - started < 15.0
    assert result.kind is FindingKind.GPU_LOWERING
    assert "8-row tiles" in result.first_failure.finding.explanation


def _verdict_of(result) -> tuple:
    """What a learner reads of a check: pass or fail, the kind, the case, the message, the lines named."""
    case = result.first_failure
    findings = result.findings or (case.findings if case is not None else ())
    return (result.passed, result.kind, case.label if case is not None else None,
            tuple((f.message, tuple((line.line, line.text) for line in f.where)) for f in findings),
            repr(case.mismatch) if case is not None else None)


@pytest.mark.parametrize("name", ["tma_double_buffer", "warp_specialized"])
def test_the_same_file_gets_the_same_verdict_every_time(name: str, tmp_path: Path):
    """Issue 31: the solution and every mistake of a one-warpgroup and a two-warpgroup puzzle, checked three
    times, read the same each time (the schedules are seeded by the case, not left to the operating system)."""
    puzzle = COURSE.find(name)
    skip_if_jax_too_old(puzzle)
    mistakes = [m for m in MISTAKES if m.puzzle == name]
    assert mistakes, f"{name} has no mistakes to repeat"
    files = {"solution": puzzle.solution_path}
    files.update({m.name: build_mistake(m, tmp_path) for m in mistakes})
    for label, path in files.items():
        verdicts = {_verdict_of(check_puzzle(puzzle, path, INTERPRET)) for _ in range(3)}
        assert len(verdicts) == 1, (label, verdicts)
        assert next(iter(verdicts))[0] is (label == "solution"), label


@pytest.mark.parametrize("backend", [INTERPRET, GPU], ids=lambda b: b.name)
def test_a_blackwell_mma_in_a_hopper_puzzle_is_refused_before_anything_runs(backend, tmp_path: Path):
    """The source lint comes first on both backends: on the gpu one it refuses before a GPU is needed."""
    mistake = _mistake("p40_tcgen05_on_hopper")
    puzzle = COURSE.find(mistake.puzzle)
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, build_mistake(mistake, tmp_path), backend)
    assert result.kind is FindingKind.BLACKWELL_ON_HOPPER
    assert [w.text for w in result.first_failure.finding.where] == [mistake.line]
