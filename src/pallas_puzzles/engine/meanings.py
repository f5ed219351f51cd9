"""What an error message from JAX or Pallas usually means, in the learner's terms.

Each entry is (a pattern in the error text, the plain-language meaning). The first
pattern that matches wins, so the specific ones come before the general ones.
"""

from __future__ import annotations

import re

DTYPE_MEANING = "A value stored into a ref must have the ref's dtype; cast it with .astype(ref.dtype)."

# (pattern in the error text, what it usually means in Pallas)
PLAIN_MEANINGS: tuple[tuple[str, str], ...] = (
    (r"Invalid shape for `swap`",
     "A value stored into a ref must have the shape of what it replaces (here the whole block): the "
     "right-hand side has another shape. Check the broadcast ([:, None] makes a column, [None, :] a row)."),
    (r"Invalid dtype for `swap`", DTYPE_MEANING),
    (r"Out of bound slice",
     "A pl.ds(start, size) slice reaches past the end of a ref: start + size must not exceed that "
     "dimension of the block."),
    (r"captures? constants|closes? over|Pallas kernels? .*consts",
     "Kernels cannot close over arrays: pass them to pallas_call as inputs, or build them inside "
     "the kernel with jnp."),
    (r"Incompatible shapes for broadcasting|could not be broadcast|shapes must be equal|must have the same shape|"
     r"Shapes must be|do not match|mismatch",
     "Two values in the kernel have shapes that do not line up. Print them with .shape; for an outer "
     "operation index one side with [:, None] and the other with [None, :]."),
    (r"contracting dimension|dot_general requires",
     "The inner dimensions of a jnp.dot differ: an (m, k) block can only be multiplied by a (k, n) block."),
    (r"TracerBoolConversion|ConcretizationType|TracerIntegerConversion|concrete value",
     "Python control flow (if, for ... in range, int()) met a traced value such as program_id or "
     "loaded data. Inside a kernel use pl.when, jnp.where or lax.fori_loop instead."),
    (r"index_map",
     "An index_map must take one argument per grid axis and return one block index per block "
     "dimension."),
    (r"Advanced indexers|int indexing|Cannot do int indexing|gather",
     "Refs are indexed with ..., slices or pl.ds(start, size), not with arrays of indices."),
    (r"block.?shape|Block shape",
     "A BlockSpec's block_shape needs one entry per array dimension (None squeezes a dimension away)."),
    (r"program_id",
     "pl.program_id(axis) exists only for the axes of the grid passed to pallas_call."),
    (r"dtype|float0|cannot cast", DTYPE_MEANING),
)


def first_meaning(table: tuple[tuple[str, str], ...], text: str, flags: int = 0) -> str:
    """The meaning of the first pattern in `table` that `text` matches ("" when none does)."""
    return next((meaning for pattern, meaning in table if re.search(pattern, text, flags)), "")


def plain_meaning(text: str) -> str:
    return first_meaning(PLAIN_MEANINGS, text, re.IGNORECASE)
