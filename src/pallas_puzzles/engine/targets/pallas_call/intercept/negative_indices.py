"""A negative index into a ref is out of bounds: it does not count from the end.

The TPU interpreter keeps every buffer as a numpy array, so `ref[i]` with i = -1
reads the last element, the numpy way. Mosaic (and Triton) compute an address
from the index instead and read or write before the buffer (jax-ml/jax#27490),
whether the -1 is written in the source or computed (`ref[k - 1]` at k = 0).
While a check runs, a read, write or copy whose index is negative raises
NegativeIndex, which the checker reports as out of bounds, naming the line.

Every read, write and copy of the interpreter turns its indices into numpy
ranges through one private helper, the interpreter's to_range (pallas_call/jax_private.py,
with the versions checked); this wraps it. Its caller says
which way the data moves: `get` reads, `store` and `swap` write.
"""

from __future__ import annotations

import sys
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

_READERS = frozenset({"get"})
_WRITERS = frozenset({"store", "swap"})
_installed = False


class NegativeIndex(IndexError):
    """A read, write or copy at a negative position of a buffer."""

    def __init__(self, message: str, writing: bool) -> None:
        super().__init__(message)
        self.writing = writing


def _negative(ranges: tuple[Any, ...]) -> tuple[int, int] | None:
    """(dimension, index) of the first negative index or slice start, or None."""
    for dim, item in enumerate(ranges):
        start = item.start if isinstance(item, slice) else item
        if isinstance(start, int) and start < 0:
            return dim, start
    return None


def install() -> None:
    """Wrap the interpreter's range helper (idempotent); it checks only while a session is active."""
    global _installed
    if _installed:
        return
    utils = jax_private.interpret_utils()
    original = utils.to_range

    def checked(transforms: Any) -> tuple[Any, ...]:
        ranges = original(transforms)
        caller = sys._getframe(1).f_code.co_name
        if active.session is None or caller not in _READERS | _WRITERS:
            return ranges
        found = _negative(ranges)
        if found is not None:
            dim, index = found
            writing = caller in _WRITERS
            raise NegativeIndex(
                f"the kernel {'writes' if writing else 'reads'} index {index} along dimension {dim}: inside a "
                f"kernel a negative index does not count from the end, it {'writes' if writing else 'reads'} "
                f"outside the buffer (the interpreter, like numpy, would wrap it around).", writing)
        return ranges

    utils.to_range = checked
    _installed = True
