"""On a compiled backend each output starts as the sentinel (intercept/device_prefill.py).

A GPU cannot run here, so the changed call runs in Pallas's own interpreter (`interpret=True`),
which honours input_output_aliases as the compiled call does: what these tests show is that the
call the checker makes gives every element nobody writes the sentinel, and leaves the learner's
kernel its own refs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl

from pallas_puzzles.engine.targets.pallas_call.intercept import call_reader
from pallas_puzzles.engine.targets.pallas_call.intercept.device_prefill import prefilled
from pallas_puzzles.engine.unwritten import sentinel_for

SENTINEL = sentinel_for(np.float32)
X = jnp.arange(256, dtype=jnp.float32)
ONE = jax.ShapeDtypeStruct((256,), jnp.float32)


def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def _run(kernel, out_shape, operands, **kwargs):
    """The call as the checker makes it on a GPU, run by Pallas's interpreter; and whether it was changed."""
    record = call_reader.describe(kernel, kwargs, operands, out_shape, "<learner>")
    run_kernel, args, run_kwargs, run_operands = prefilled(kernel, (out_shape,), kwargs, operands, record)
    out = pl.pallas_call(run_kernel, *args, interpret=True, **run_kwargs)(*run_operands)
    return out, run_kernel is not kernel


def test_a_grid_that_rounds_down_leaves_the_sentinel_where_no_program_writes():
    block = pl.BlockSpec((64,), lambda i: (i,))
    out, changed = _run(_add_one, ONE, (X,), grid=(3,), in_specs=[block], out_specs=block)  # 3 of 4 blocks
    assert changed
    np.testing.assert_array_equal(out[:192], X[:192] + 1)
    assert (np.asarray(out[192:]) == SENTINEL).all()


def test_a_grid_spec_is_changed_as_a_copy_and_the_learners_stays_as_written():
    block = pl.BlockSpec((64,), lambda i: (i,))
    spec = pl.GridSpec(grid=(3,), in_specs=[block], out_specs=block)
    out, changed = _run(_add_one, ONE, (X,), grid_spec=spec)
    assert changed and len(spec.in_specs) == 1
    assert (np.asarray(out[192:]) == SENTINEL).all() and (np.asarray(out[:192]) == np.asarray(X[:192]) + 1).all()


def test_specs_left_out_and_a_kernel_that_writes_one_of_two_outputs():
    def first_only(x_ref, a_ref, b_ref):
        a_ref[...] = x_ref[...] * 2.0

    out, changed = _run(first_only, (ONE, ONE), (X,))
    assert changed
    np.testing.assert_array_equal(out[0], X * 2)
    assert (np.asarray(out[1]) == SENTINEL).all()


def test_only_the_outputs_specs_given():
    block = pl.BlockSpec((128,), lambda i: (0,))  # both programs write block 0: block 1 stays unwritten
    out, _ = _run(_add_one, ONE, (X,), grid=(2,), out_specs=block, in_specs=[pl.BlockSpec((128,), lambda i: (0,))])
    assert (np.asarray(out[128:]) == SENTINEL).all()


def test_an_output_the_learner_aliases_already_is_left_to_them():
    block = pl.BlockSpec((64,), lambda i: (i,))
    out, changed = _run(_add_one, ONE, (X,), grid=(3,), in_specs=[block], out_specs=block,
                        input_output_aliases={0: 0})
    assert not changed
    np.testing.assert_array_equal(out[192:], X[192:])  # the aliased input's own values, as on the hardware


@pytest.mark.parametrize("form", ["pytree operand", "in_specs of another length"])
def test_a_call_of_another_form_runs_as_written(form):
    block = pl.BlockSpec((64,), lambda i: (i,))
    if form == "pytree operand":
        operands, in_specs = ({"x": X},), [{"x": block}]
    else:
        operands, in_specs = (X,), [block, block]
    record = call_reader.describe(_add_one, {"in_specs": in_specs}, operands, ONE, "<learner>")
    kernel, _, kwargs, run_operands = prefilled(_add_one, (ONE,), {"grid": (4,), "in_specs": in_specs,
                                                                    "out_specs": block}, operands, record)
    assert kernel is _add_one and "input_output_aliases" not in kwargs and len(run_operands) == 1
