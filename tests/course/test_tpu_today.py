"""The chapter in the style of JAX's current TPU guides (puzzles 44-49) and its target, tpu-kernel: what
its traps give, every time, and how pl.kernel is run."""

from __future__ import annotations

import time
from pathlib import Path

from helpers import COURSE, MISTAKES, build_mistake

from pallas_puzzles.backends import INTERPRET, TPU, Mode
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind


def _verdict(puzzle_name: str, path: Path) -> tuple[str | None, str, tuple[int, ...]]:
    result = check_puzzle(COURSE.find(puzzle_name), path, INTERPRET)
    finding = result.first_failure.finding if result.first_failure is not None else None
    return (result.kind.id if result.kind else None, finding.message if finding else "",
            tuple(line.line for line in finding.where) if finding else ())


def test_a_missing_core_barrier_is_found_on_every_run(tmp_path):
    """On hardware the sum is right in some runs; here the race detector, seeded, names both copies every time."""
    mistake = next(m for m in MISTAKES if m.name == "p45_no_core_barrier")
    path = build_mistake(mistake, tmp_path)
    verdicts = {_verdict(mistake.puzzle, path) for _ in range(5)}
    assert len(verdicts) == 1
    kind, message, lines = verdicts.pop()
    assert kind == FindingKind.CORE_BARRIER.id and "Core 0 reads" in message and "core 1 writes" in message
    assert len(lines) == 2


def test_a_barrier_only_one_core_enters_stops_at_once_naming_the_wait(tmp_path):
    mistake = next(m for m in MISTAKES if m.name == "p45_barrier_on_one_core")
    puzzle = COURSE.find(mistake.puzzle)
    start = time.perf_counter()
    result = check_puzzle(puzzle, build_mistake(mistake, tmp_path), INTERPRET)
    assert time.perf_counter() - start < 5.0
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.SEMAPHORE_STALL
    assert "core 1 has finished the kernel" in finding.message
    assert [line.text for line in finding.where] == ['pltpu.core_barrier(sem, core_axis_name="core")']
    # The process is usable again at once: the reference solution passes next.
    assert check_puzzle(puzzle, puzzle.solution_path, INTERPRET).passed


def test_a_kernel_made_before_the_check_still_runs_in_the_interpreter():
    """JAX reads the interpret mode when pl.kernel(...) is applied; the stand-in applies it when the kernel is
    called, so a kernel made at import time (no session yet) runs in the check's interpreter."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    from pallas_puzzles.engine import targets
    from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope

    targets.get("tpu-kernel")().start()

    def body(x_hbm, z_hbm, buf):
        pltpu.sync_copy(x_hbm, buf)
        buf[...] = buf[...] + 1.0
        pltpu.sync_copy(buf, z_hbm)

    mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)  # jax 0.12's spelling, on either jax
    made_early = pl.kernel(body, out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32), mesh=mesh,
                           scratch_types=[pltpu.VMEM((8, 128), jnp.float32)])
    session = StrictSession(backend=INTERPRET, learner_file=__file__)
    with session_scope(session):
        out = made_early(np.ones((8, 128), np.float32))
    assert np.array_equal(np.asarray(out), np.full((8, 128), 2.0, np.float32))
    assert session.calls and session.calls[-1].kernel_name == "body"


def test_a_mesh_without_num_cores_is_refused_at_its_line(tmp_path):
    mistake = next(m for m in MISTAKES if m.name == "p44_no_num_cores")
    kind, message, _ = _verdict(mistake.puzzle, build_mistake(mistake, tmp_path))
    assert kind == FindingKind.CORE_COUNT.id and "num_cores=2" in message


def test_a_grid_sized_from_the_data_is_not_an_answer_computed_outside_the_kernel(tmp_path: Path):
    """The lowering sees the run-time grid's size as an operand of the pallas_call: count[0] // BR in the
    launcher passes, while arithmetic on the data the kernel reads is still refused at its line."""
    puzzle = COURSE.find("runtime_grid")
    assert check_puzzle(puzzle, puzzle.solution_path, TPU, Mode.LOWER).passed
    edited = tmp_path / puzzle.file
    edited.write_text(puzzle.solution_path.read_text().replace("    )(x)\n", "    )(x * 2.0)\n"))
    result = check_puzzle(puzzle, edited, TPU, Mode.LOWER)
    assert result.kind is FindingKind.OUTSIDE_KERNEL
    assert [line.text for line in result.first_failure.finding.where][:1] == [")(x * 2.0)"]
