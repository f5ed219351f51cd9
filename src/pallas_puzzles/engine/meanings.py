"""What an error message from JAX or Pallas says and usually means, in the learner's terms.

`PLAIN_MESSAGES` says again what happened (JAX's "Invalid dtype for `swap`" becomes "Line 31 stores
bfloat16 into z_ref, a float32 block"); `PLAIN_MEANINGS` adds what that usually means in Pallas. In
each table the first pattern that matches wins, so the specific ones come before the general ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pallas_puzzles.source_line import SourceLine

DTYPE_MEANING = "A value stored into a ref must have the ref's dtype; cast it with .astype(ref.dtype)."

# (pattern in the error text, what it usually means in Pallas)
PLAIN_MEANINGS: tuple[tuple[str, str], ...] = (
    (r"Invalid shape for `swap`",
     "A value stored into a ref must have the shape of what it replaces (here the whole block): the "
     "right-hand side has another shape. Check the broadcast ([:, None] makes a column, [None, :] a row)."),
    (r"Invalid dtype for `swap`", DTYPE_MEANING),
    (r"Pytree for `(in_specs|out_specs)`",
     "pallas_call pairs each input with one BlockSpec of in_specs and each output with one of out_specs, in "
     "order: each list is as long as the arrays it describes."),
    (r"positional arguments? but \d+ (was|were) given",
     "An index_map takes one argument per grid axis (lambda i, j: ... for a 2-D grid); a kernel takes one ref "
     "per input, then per output, then per scratch buffer."),
    (r"'(Abstract|Transformed)?Ref' object has no attribute|unsupported operand type.*Ref",
     "A ref is a handle to a block, not an array: x_ref[...] reads the whole block and x_ref[pl.ds(start, "
     "size)] a slice; compute with what you read, then store it with z_ref[...] = value."),
    (r"out of bounds for grid",
     "pl.program_id(axis) and pl.num_programs(axis) exist only for the axes of the grid passed to pallas_call, "
     "numbered from 0."),
    (r"carry input and carry output must have equal types",
     "A loop body (lax.fori_loop) must return its carry with the shape and dtype it came in with: start it "
     "with the dtype the body produces (jnp.zeros(shape, jnp.float32)) or cast the result with .astype."),
    (r"KeyError:? \('(vmem|smem|semaphore)', \d+",
     "A buffer of pl.run_scoped is freed when its function returns: a copy into or out of it that is "
     "still in flight then (started inside, waited for outside) finds no buffer, and on a TPU its memory "
     "may already hold something else. Wait for every copy of a scoped buffer inside the scope."),
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


# -- JAX's words for what went wrong, said again in the learner's ---------------------------------

Say = Callable[[re.Match[str], str, str], str]  # (the match, "Line 34" or "The kernel", that line's code) -> sentence
_STORED_INTO = re.compile(r"^\s*(\w+)\s*\[.*\]\s*=[^=]")
_BARE_REF = re.compile(r"\b(\w+_ref)\b(?!\s*[\[.(])")


def _stored_into(code: str) -> str:
    """The ref a line stores into (`z_ref[...] = ...` -> z_ref)."""
    found = _STORED_INTO.match(code)
    return found.group(1) if found else "a ref"


def _bare_ref(code: str) -> str:
    """A ref a line uses without reading it (`x_ref + 10.0` -> x_ref)."""
    found = _BARE_REF.search(code.split("=", 1)[-1])
    return found.group(1) if found else "a ref"


def _count(number: int | str, noun: str, plural: str = "") -> str:
    """'1 dimension', '2 dimensions' ('1 axis', '2 axes' with `plural`)."""
    return f"{number} {noun if int(number) == 1 else plural or noun + 's'}"


def _dimensions(spec: str) -> int:
    return max(1, spec.count("Blocked(") + spec.count("Squeezed(") + spec.count("None"))


def _function(name: str) -> str:
    """JAX's name of a called function as the learner wrote it: `f.<locals>.<lambda>` -> a lambda."""
    short = name.rsplit(".", 1)[-1]
    return "A lambda" if short == "<lambda>" else f"{short}()"


def _input(which: str) -> str:
    """JAX's `args[0]` -> in_specs[0]; `outputs` -> out_specs."""
    index = re.search(r"\[(\d+)\]", which)
    return f"in_specs[{index.group(1)}]" if which.startswith("args") and index else "out_specs"


_KNOWN_ONLY_WHEN_RUN = "a value known only while the kernel runs (pl.program_id, data read from a ref)"

# (a pattern in JAX's message, the finding's message in the learner's terms); the first match wins.
PLAIN_MESSAGES: tuple[tuple[str, Say], ...] = (
    (r"KeyError:? \('(vmem|smem|semaphore)', \d+",  # the interpreter's key of a freed buffer (its numbers vary)
     lambda m, at, code: f"{at} uses a {m.group(1).upper()} buffer of pl.run_scoped after its scope ended: a copy "
                         f"into or out of it was still in flight when the scoped function returned."),
    (r"Invalid dtype for `swap`\. Ref dtype: (\w+)\. Value dtype: (\w+)",
     lambda m, at, code: f"{at} stores {m.group(2)} into {_stored_into(code)}, a {m.group(1)} block: the value "
                         f"must have the ref's dtype."),
    (r"TracerBoolConversionError",
     lambda m, at, code: f"{at} puts {_KNOWN_ONLY_WHEN_RUN} in a Python if, and, or or while, which must be "
                         f"decided before the kernel runs."),
    (r"TracerIntegerConversionError|__index__\(\) method was called on traced|ConcretizationTypeError",
     lambda m, at, code: f"{at} uses {_KNOWN_ONLY_WHEN_RUN} where Python needs a plain number now: in range(), "
                         f"a shape, a static slice or int()."),
    (r"'(?:Abstract|Transformed)?Ref' object has no attribute '_\w+'|unsupported operand type.*Ref",
     lambda m, at, code: f"{at} computes with the ref {_bare_ref(code)} itself rather than with its values: read "
                         f"them with {_bare_ref(code)}[...] first."),
    (r"Index map function \S+ at .*:(\d+) for (\S+) must return (\d+) values to match block_shape=\((.*)\)\. "
     r"Currently returning (\d+) values",
     lambda m, at, code: f"The index_map of {_input(m.group(2))} (line {m.group(1)}) returns "
                         f"{_count(m.group(5), 'block index', 'block indices')}, but its block_shape has "
                         f"{_count(m.group(3), 'dimension')}: it must return one block index per dimension."),
    (r"Block shape for (\S+) \(= \((.*)\)\) must have the same number of dimensions as the array shape "
     r"\(([^)]*)\)",
     lambda m, at, code: f"The block_shape of {_input(m.group(1))} has {_count(_dimensions(m.group(2)), 'dimension')}, "
                         f"but its array has shape ({m.group(3)}): a block needs one entry per dimension of the "
                         f"array."),
    (r"`(in_specs|out_specs)` is a \w+ of length (\d+) but `(\w+)` is a \w+ of length (\d+)",
     lambda m, at, code: f"{at} passes {m.group(2)} {m.group(1)} for {_count(m.group(4), m.group(3).rstrip('s'))}: "
                         f"pallas_call takes one BlockSpec per array, in the same order."),
    (r"Axis (\d+) is out of bounds for grid \(([^)]*)\)",
     lambda m, at, code: f"{at} asks for grid axis {m.group(1)}, but the grid ({m.group(2)}) has "
                         f"{_count(len([g for g in m.group(2).split(',') if g.strip()]), 'axis', 'axes')}, "
                         f"numbered from 0."),
    (r"(\S+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given",
     lambda m, at, code: f"{_function(m.group(1))} is called with {_count(m.group(3), 'argument')} but takes "
                         f"{m.group(2)}: an index_map gets one per grid axis (the program ids), a kernel one ref per "
                         f"input, output and scratch buffer."),
    (r"dot_general requires contracting dimensions to have the same shape, got \(([^)]*)\) and \(([^)]*)\)",
     lambda m, at, code: f"{at} multiplies blocks whose inner dimensions differ: ({m.group(1)}) and ({m.group(2)})."),
    (r"(\w+) got incompatible shapes for broadcasting: (\([^)]*\)), (\([^)]*\))",
     lambda m, at, code: f"{at} combines values of shapes {m.group(2)} and {m.group(3)} ({m.group(1)}), which "
                         f"do not broadcast together."),
    (r"Incompatible shapes for broadcasting: shapes=\[(.*?)\]",
     lambda m, at, code: f"{at} combines values of shapes {m.group(1)}, which do not broadcast together."),
    (r"carry input and carry output must have equal types.*?has type (\w+\[[^\]]*\]) but the corresponding output "
     r"carry component has type (\w+\[[^\]]*\])",
     lambda m, at, code: f"{at} runs a loop whose body returns a {m.group(2)} carry for the {m.group(1)} one it "
                         f"was given: it must return the carry's own shape and dtype."),
    (r"cannot reshape array of shape (\([^)]*\)) \(size (\d+)\) into shape (\([^)]*\)) \(size (\d+)\)",
     lambda m, at, code: f"{at} reshapes {m.group(2)} elements of shape {m.group(1)} into shape {m.group(3)}, which "
                         f"holds {m.group(4)}: a reshape keeps the number of elements."),
)


def plain_message(text: str, where: tuple[SourceLine, ...] = ()) -> str:
    """JAX's message in the learner's terms, naming the line that raised it (the innermost of `where`);
    "" when the message is not one learners are known to meet."""
    line = where[-1] if where else None
    at = f"Line {line.line}" if line is not None else "The kernel or its launcher"
    for pattern, say in PLAIN_MESSAGES:
        found = re.search(pattern, text, re.DOTALL)
        if found:
            return say(found, at, line.text if line is not None else "")
    return ""


def first_meaning(table: tuple[tuple[str, str], ...], text: str, flags: int = 0) -> str:
    """The meaning of the first pattern in `table` that `text` matches ("" when none does)."""
    return next((meaning for pattern, meaning in table if re.search(pattern, text, flags)), "")


def plain_meaning(text: str) -> str:
    return first_meaning(PLAIN_MEANINGS, text, re.IGNORECASE)
