"""The launcher's whole HBM traffic: XLA operations around the pallas_calls and the kernel's own
copies are counted, and the card names the launcher line (issue 18, class 2)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import COURSE

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.engine.targets.pallas_call import launcher_traffic
from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch, patch
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.report import perf_card, terminal

N = 256  # puzzle 2's input: x of shape (N,), float32
KERNEL = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

B = 128


def kernel(x_ref, z_ref):
    z_ref[...] = x_ref[...] + 10.0


def call(x):
    spec = pl.BlockSpec((B,), lambda i: (i,))
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(pl.cdiv(x.shape[0], B),),
                          in_specs=[spec], out_specs=spec)(x)
"""


def _measure(tmp_path: Path, launcher: str):
    patch.install()
    dma_watch.install()
    file = tmp_path / "learner.py"
    file.write_text(KERNEL + textwrap.dedent(launcher))
    puzzle = COURSE.find("constant_add_blocked")
    entry = getattr(load_learner_module(file), puzzle.entry)
    inputs = specs.make_inputs(puzzle, {"N": N}, 0)
    return launcher_traffic.measure(entry, inputs, puzzle, StrictSession(backend=INTERPRET, learner_file=str(file)))


@pytest.mark.parametrize("launcher", [
    "def constant_add_blocked(x):\n    return call(x)\n",
    "def constant_add_blocked(x):\n    return call(x.reshape(2, N // 2).reshape(N))\n".replace("N", str(N)),
], ids=["only-the-call", "views"])
def test_a_launcher_that_only_calls_moves_nothing_outside(tmp_path, launcher):
    assert _measure(tmp_path, launcher).hbm_bytes == 0


def test_work_before_the_call_reads_its_input_and_writes_what_the_call_reads(tmp_path):
    traffic = _measure(tmp_path, """
        def constant_add_blocked(x):
            shifted = x - 1.0
            return call(shifted) + 1.0
    """)
    before, after = sorted(traffic.steps, key=lambda s: s.line.line)
    assert before.line.text == "shifted = x - 1.0"
    assert (before.read_bytes, before.written_bytes, before.reads) == (4 * N, 4 * N, ("x",))
    assert after.line.text == "return call(shifted) + 1.0"
    assert (after.read_bytes, after.written_bytes) == (4 * N, 4 * N)
    assert "pallas_call 1 (kernel)" in after.reads[0] and "the launcher returns" in after.writes[0]


def test_a_stack_reads_both_parts_and_a_slice_only_what_it_takes(tmp_path):
    traffic = _measure(tmp_path, """
        def constant_add_blocked(x):
            pair = jnp.stack([x, x])
            return call(pair.reshape(-1))[: x.shape[0]]
    """)
    stack, cut = sorted(traffic.steps, key=lambda s: s.line.line)
    assert (stack.read_bytes, stack.written_bytes) == (4 * N, 8 * N)  # x once (perfect fusion), the pair once
    assert (cut.read_bytes, cut.written_bytes) == (4 * N, 4 * N)  # only the half it keeps


def test_the_card_and_json_name_the_launcher_line(tmp_path, validate_json):
    from pallas_puzzles.report import json_view

    source = COURSE.find("constant_add_blocked").solution_path.read_text()
    learner = tmp_path / "02.py"
    # Layout XLA materialises (the answer still comes from the kernel): reversed twice, x comes back as it was.
    learner.write_text(source.replace("    )(x)\n", "    )(jnp.flip(jnp.flip(x)))\n"))
    result = check_puzzle(COURSE.find("constant_add_blocked"), learner, INTERPRET)
    assert result.passed
    perf = perf_card.card_case(result)
    assert perf.launcher is not None and perf.traffic_ratio > 1.0
    console = terminal.make_console(force_plain=True)
    with console.capture() as capture:
        perf_card.render_card(console, perf)
    card = capture.get()
    assert "Outside the pallas_calls" in card and ")(jnp.flip(jnp.flip(x)))" in card
    assert "runs in XLA, outside the pallas_calls" in perf.waste
    assert perf.waste_array is None  # a launcher line, not an array: the budget names no array (was "line")
    document = json_view.result_document(result)
    validate_json(document)
    assert document["performance"]["launcher"][0]["line"]["text"] == ")(jnp.flip(jnp.flip(x)))"


