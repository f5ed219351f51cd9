"""The Blackwell target's reading of a hang at a multicast's barrier (blackwell/multicast.py): the multicast copy
issued under a condition is named; one issued by every block, or a copy that is no multicast, is not."""

from __future__ import annotations

import linecache

import pytest

from pallas_puzzles.engine.targets.blackwell import multicast

HEAD = "def kernel(a_gmem, a_smem, bar, other):\n"
COPY = '    plgpu.copy_gmem_to_smem(a_gmem, a_smem, bar, collective_axes="c")\n'


def _file(tmp_path, body: str) -> str:
    path = tmp_path / "k.py"
    path.write_text(HEAD + body)
    linecache.checkcache(str(path))
    return str(path)


@pytest.mark.parametrize("body", [
    '    @pl.when(jax.lax.axis_index("c") == 0)\n    def _():\n    ' + COPY,
    "    def issue():\n    " + COPY + "    jax.lax.cond(first, issue, lambda: None)\n",
    "    def issue():\n    " + COPY + "    pl.when(first)(issue)\n",
])
def test_a_multicast_under_a_condition_is_named_at_its_line(tmp_path, body: str):
    file = _file(tmp_path, body)
    found = multicast.conditional_copy(file, "bar")
    assert found is not None and "collective_axes" in found.text
    assert found.line == next(i for i, text in enumerate(open(file), 1) if "collective_axes" in text)


@pytest.mark.parametrize(("body", "barrier"), [
    (COPY, "bar"),  # every block issues it
    # not a multicast:
    ('    @pl.when(first)\n    def _():\n        plgpu.copy_gmem_to_smem(a_gmem, a_smem, bar)\n', "bar"),
    ('    @pl.when(first)\n    def _():\n    ' + COPY, "other"),  # arrives on another barrier
    ("    def (:\n", "bar"),  # does not parse: left to the stall's own words
])
def test_anything_else_is_left_to_the_stall(tmp_path, body: str, barrier: str):
    assert multicast.conditional_copy(_file(tmp_path, body), barrier) is None
