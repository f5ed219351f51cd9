"""An output aliased to an input comes back in its declared shape (the interpreter's padding cut off)."""

from types import SimpleNamespace

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.intercept.aliased_outputs import declared


def aval(*shape: int) -> SimpleNamespace:
    return SimpleNamespace(shape=shape)


def test_an_aliased_output_padded_to_whole_blocks_is_cut_back_to_its_declared_shape() -> None:
    padded = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    (out,) = declared([padded], [aval(5, 9)], ((1, 0),))
    assert out.shape == (5, 9)
    np.testing.assert_array_equal(out, padded[:5, :9])


def test_outputs_not_aliased_or_already_in_shape_are_left_as_they_are() -> None:
    first, second = np.zeros((8, 12)), np.ones((4, 4))
    out = declared([first, second], [aval(5, 9), aval(4, 4)], ((0, 1),))
    assert out[0] is first  # not aliased: the interpreter already returns the declared shape
    assert out[1] is second  # aliased, and no padding to cut
