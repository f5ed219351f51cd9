"""Targets are plug-ins: a course can name a target that only it (here: only this test) defines.

The test writes a small course whose chapter names a target class of its own, the
TPU interpreter over four simulated host devices, and checks that course's puzzle
in a real checker process. It touches nothing outside this file and engine/targets/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.engine import targets
from pallas_puzzles.worker.client import Worker

TARGET_MODULE = '''
from pallas_puzzles.engine.targets.base import ProcessSetup
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter


class FourDevices(TpuInterpreter):
    """The strict TPU interpreter in a process with four simulated CPU devices."""

    name = "four-devices"
    summary = "the TPU interpreter over four simulated devices (a test's own target)"
    setup = ProcessSetup(host_devices=4, block_imports=TpuInterpreter.setup.block_imports)
    partners = {}
'''

COURSE = '''
format = 2

[course]
name = "target-test"
title = "A course with a target of its own"

[[chapter]]
name = "devices"
title = "Counting devices"
intro = "Its kernels run where four CPU devices are simulated."
target = "four_devices_target:FourDevices"
backends = ["interpret"]

[[chapter.puzzle]]
name = "add_device_count"
title = "Add the number of devices"
file = "01_add_device_count.py"
entry = "add_device_count"
summary = "z = x + the number of devices"
hints = ["Four devices.", "Add 4.0."]
inputs = [{ name = "x", shape = ["N"] }]
[chapter.puzzle.cases]
interpret = [{ N = 8 }, { N = 16 }, { N = 24 }]
'''

SPEC = '''
import jax


def spec(x):
    return x + float(jax.device_count())
'''

LAUNCHER = '''
"""Add the number of devices: a kernel that can only pass where four devices are simulated."""
import jax
from jax.experimental import pallas as pl


def kernel(x_ref, z_ref):
    z_ref[...] = x_ref[...] + {constant}  # TODO


def add_device_count(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
'''


@pytest.fixture()
def course_with_own_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "four_devices_target.py").write_text(TARGET_MODULE)
    folder = tmp_path / "course"
    for sub in ("exercises", "solutions", "specs"):
        (folder / sub).mkdir(parents=True)
    (folder / "course.toml").write_text(COURSE)
    (folder / "specs" / "add_device_count.py").write_text(SPEC)
    (folder / "exercises" / "01_add_device_count.py").write_text(LAUNCHER.format(constant="0.0"))
    (folder / "solutions" / "01_add_device_count.py").write_text(LAUNCHER.format(constant="4.0"))
    # The checker process imports the course's target by its module name.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(tmp_path))
    return folder


def test_a_target_registered_only_by_a_course_checks_its_puzzle(course_with_own_target: Path):
    course = load_course(course_with_own_target)
    puzzle = course.find("add_device_count")
    assert puzzle.target == "four_devices_target:FourDevices"
    assert targets.get(puzzle.target).setup.host_devices == 4
    with Worker("interpret", Mode.RUN, puzzle.target) as worker:
        assert worker.start() is INTERPRET
        passed = worker.check(puzzle, puzzle.solution_path, fail_fast=False)
        assert passed.passed, passed.findings or [c.mismatch for c in passed.cases]
        assert len(passed.cases) == 3
        stub = worker.check(puzzle, puzzle.stub_path)
    assert not stub.passed and stub.kind is not None and stub.kind.is_mismatch


def test_the_same_puzzle_fails_in_a_process_with_one_device(course_with_own_target: Path):
    """The device count comes from the target's process setup, not from the course or the kernel."""
    course = load_course(course_with_own_target)
    puzzle = course.find("add_device_count")
    with Worker("interpret", Mode.RUN, "tpu-interpret") as worker:
        worker.start()
        assert not worker.check(puzzle, puzzle.solution_path).passed


def test_a_target_module_kept_beside_the_course_file_needs_no_import_path(tmp_path: Path):
    """A course folder carries its own target as a module next to course.toml: checker processes load it
    by its file, with nothing on PYTHONPATH, and dev check counts it as part of the course."""
    from pallas_puzzles.dev import static

    folder = tmp_path / "course"
    for sub in ("exercises", "solutions", "specs"):
        (folder / sub).mkdir(parents=True)
    (folder / "four_devices_target.py").write_text(TARGET_MODULE)
    (folder / "course.toml").write_text(COURSE)
    (folder / "specs" / "add_device_count.py").write_text(SPEC)
    (folder / "exercises" / "01_add_device_count.py").write_text(LAUNCHER.format(constant="0.0"))
    (folder / "solutions" / "01_add_device_count.py").write_text(LAUNCHER.format(constant="4.0"))
    puzzle = load_course(folder).find("add_device_count")
    assert puzzle.target == f"{folder / 'four_devices_target.py'}:FourDevices"
    assert targets.get(puzzle.target).setup.host_devices == 4
    with Worker("interpret", Mode.RUN, puzzle.target) as worker:
        worker.start()
        assert worker.check(puzzle, puzzle.solution_path, fail_fast=False).passed
    assert static.stray_files(load_course(folder)) == []


def test_a_target_that_counts_its_devices_keeps_its_count_in_a_run_of_several_targets(course_with_own_target: Path):
    """`--all` checks a run's targets on shared checkers (engine.targets.process_groups), but never puts a
    target that asked for four devices in a process with eight: its spec counts them."""
    from helpers import COURSE as BUILTIN

    from pallas_puzzles.checking import service
    from pallas_puzzles.checking.jobs import Job, Options

    own = load_course(course_with_own_target).find("add_device_count")
    puzzles = [BUILTIN.find("constant_add"), own, BUILTIN.find("ring_all_gather"), BUILTIN.find("outer_add")]
    assert targets.process_groups([p.target for p in puzzles]) == [
        ("tpu-interpret", own.target), ("tpu-multichip",)]
    report = service.run([Job(p, p.solution_path, "interpret") for p in puzzles], Options(workers=1))
    assert [o.result.passed for o in report.outcomes if o.result is not None] == [True] * 4
