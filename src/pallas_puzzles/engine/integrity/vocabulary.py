"""What a launcher's operations do to the data, by JAX primitive name (no JAX imported here).

The integrity rules read a launcher's jaxpr (engine/launcher_graph.py) with these sets: layout
only moves elements (a launcher may do it around its kernels), everything else computes. A
course may allow a few computing operations on a puzzle's kernel outputs (`launcher_ops`, checked
by `dev check` against OPERATIONS without starting JAX).
"""

from __future__ import annotations

# No element changes, nor does its order: the same bytes seen another way.
VIEWS = frozenset({
    "reshape", "squeeze", "copy", "device_put", "optimization_barrier",
    "sharding_constraint", "mesh_cast", "reshard", "pvary", "join",
})
# Elements moved, repeated, selected or padded, never changed (casts are judged on their own).
LAYOUT = VIEWS | frozenset({
    "transpose", "broadcast_in_dim", "slice", "rev", "concatenate", "pad", "tile", "stack", "split",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter",
})
CAST = "convert_element_type"
# Where an operation takes positions as operands: the index operands, which must not come from the data.
INDEX_OPERANDS = {"dynamic_slice": slice(1, None), "dynamic_update_slice": slice(2, None),
                  "gather": slice(1, 2), "scatter": slice(1, 2)}
# Layout that reorders elements: where a puzzle's whole answer is such a rearrangement (a transpose),
# doing it in the launcher is doing the puzzle (engine/integrity/answers.py).
REORDERS = frozenset({"transpose", "rev", "concatenate", "stack", "gather", "scatter", "dynamic_update_slice"})
HOST_CALLS = frozenset({"pure_callback", "io_callback", "callback"})

# Computing operations a course may allow in a launcher, on kernel outputs only (`launcher_ops`).
OPERATIONS = frozenset({
    "add", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign", "exp", "exp2", "log", "log1p",
    "expm1", "sqrt", "rsqrt", "pow", "integer_pow", "square", "tanh", "logistic", "sin", "cos", "erf",
    "floor", "ceil", "round", "clamp", "select_n", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not",
    "xor", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "argmax",
    "argmin", "cumsum", "cumprod", "cummax", "cummin", "dot_general", "sort",
})

# How a learner would name what an operation did (messages); others are named by their primitive.
WORDS = {
    "add": "an addition", "sub": "a subtraction", "mul": "a multiplication", "div": "a division",
    "neg": "a negation", "max": "a maximum", "min": "a minimum", "exp": "an exponential",
    "exp2": "an exponential", "log": "a logarithm", "tanh": "a tanh", "logistic": "a sigmoid",
    "integer_pow": "a power", "pow": "a power", "sqrt": "a square root", "rsqrt": "a reciprocal square root",
    "reduce_sum": "a sum", "reduce_max": "a maximum over an axis", "reduce_min": "a minimum over an axis",
    "argmax": "an argmax", "cumsum": "a cumulative sum", "dot_general": "a matrix product",
    "select_n": "a selection (jnp.where)", "gt": "a comparison", "lt": "a comparison", "ge": "a comparison",
    "le": "a comparison", "eq": "a comparison", "convert_element_type": "a cast", "gather": "an indexed gather",
    "dynamic_slice": "a slice at a position taken from the data", "scatter": "an indexed scatter",
    "transpose": "a transpose", "concatenate": "a concatenation", "rev": "a reversal", "stack": "a stack",
    "pure_callback": "a callback to Python on the host (jax.pure_callback)",
    "io_callback": "a callback to Python on the host (io_callback)",
    "psum": "a sum across devices (lax.psum)", "all_gather": "a gather across devices (lax.all_gather)",
    "ppermute": "a copy between devices (lax.ppermute)", "psum_scatter": "a reduce-scatter across devices",
    "all_to_all": "an all-to-all across devices", "sort": "a sort", "reduce_precision": "a rounding",
}


def words(primitive: str) -> str:
    """What the operation did, as a learner would say it."""
    return WORDS.get(primitive, f"the operation `{primitive}`")
