"""Which targets share a checker process (engine.targets.process_groups): those whose process setups agree,
or differ only in a device count the target asking for fewer runs alike with."""

from __future__ import annotations

from typing import ClassVar

import pytest

from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets import ProcessSetup, Target, process_groups, shared_setup


class CountsItsDevices(Target):
    """A course's own target that asks for 4 devices and may count them."""

    setup: ClassVar[ProcessSetup] = ProcessSetup(host_devices=4)


class OwnFlag(Target):
    setup: ClassVar[ProcessSetup] = ProcessSetup(xla_flags=("--xla_cpu_enable_fast_math=true",),
                                                 more_devices_alike=True)


class OneDeviceAlike(Target):
    setup: ClassVar[ProcessSetup] = ProcessSetup(more_devices_alike=True)


@pytest.fixture(autouse=True)
def course_targets(monkeypatch):
    monkeypatch.setitem(targets.BUILTIN, "counts-devices", CountsItsDevices)
    monkeypatch.setitem(targets.BUILTIN, "own-flag", OwnFlag)
    monkeypatch.setitem(targets.BUILTIN, "one-device", OneDeviceAlike)


def test_the_built_in_targets_share_one_process_with_the_multichip_devices():
    names = ["tpu-interpret", "tpu-multichip", "mosaic-gpu", "tpu-interpret", "tpu-kernel", "blackwell"]
    assert process_groups(names) == [("tpu-interpret", "tpu-multichip", "mosaic-gpu", "tpu-kernel", "blackwell")]
    assert shared_setup(process_groups(names)[0]).host_devices == targets.get("tpu-multichip").setup.host_devices


def test_a_target_that_may_count_its_devices_gets_exactly_its_own():
    groups = process_groups(["tpu-interpret", "counts-devices", "tpu-multichip", "one-device"])
    assert groups == [("tpu-interpret", "counts-devices", "one-device"), ("tpu-multichip",)]
    assert shared_setup(groups[0]).host_devices == 4, "one device runs alike on four; four stay four"


def test_other_xla_flags_get_a_process_of_their_own():
    assert process_groups(["own-flag", "one-device", "tpu-interpret"]) == [("own-flag",),
                                                                         ("one-device", "tpu-interpret")]
    assert shared_setup(("own-flag",)).all_xla_flags() == OwnFlag.setup.xla_flags


def test_with_the_fast_path_off_every_target_has_its_own(monkeypatch):
    monkeypatch.setenv("PALLAS_PUZZLES_FAST", "0")
    assert process_groups(["tpu-interpret", "mosaic-gpu", "tpu-interpret"]) == [("tpu-interpret",), ("mosaic-gpu",)]
