"""Mosaic TPU's rule for SMEM: one scalar per load or store.

SMEM is the scalar core's memory. Mosaic lowers a load from an SMEM ref only when it reads one element
(`ref[i]`) and a store only when it writes one; `ref[...]` of a (2,) key or a (1,) position is refused
("Can only load scalars from SMEM", in Pallas's Mosaic TPU lowering, the same on jax 0.10.2 and
0.12.0.1). The interpreter reads any shape, so such a kernel passes every case and would not compile for
the chip. On a puzzle whose only hardware is a TPU (StrictSession.tpu_block_rules), the kernel's jaxpr is
read before the interpreter runs it, and the first such load or store is a finding with its line.
A PRNG key loaded whole from SMEM is Mosaic's own exception (its key-load rule), and is allowed.

Private entry point: the TPU interpreter's interpret_pallas_call, which gets the kernel's jaxpr
(pallas_call/jax_private.py lists it with the versions checked); the jaxpr is read through its
attributes (engine/jaxprs.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.jaxprs import sub_jaxprs
from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.explain.lowering import meaning
from pallas_puzzles.engine.targets.pallas_call.intercept.call_reader import memory_space_name
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation, active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

_installed = False


def _is_key(aval: Any) -> bool:
    import jax

    return jax.dtypes.issubdtype(getattr(aval, "dtype", None), jax.dtypes.prng_key)


def _vector_access(eqn: Any) -> tuple[str, Any] | None:
    """("load" or "store", the value's aval) when the equation reads or writes more than one element of an
    SMEM ref."""
    name = eqn.primitive.name
    if name not in ("get", "swap") or not eqn.invars:
        return None
    if memory_space_name(getattr(eqn.invars[0].aval, "memory_space", None)) != "smem":
        return None
    value = eqn.outvars[0].aval if name == "get" else eqn.invars[1].aval
    if not getattr(value, "shape", ()) or (name == "get" and _is_key(value)):
        return None
    return ("load" if name == "get" else "store"), value


def first_vector_access(jaxpr: Any) -> tuple[str, Any, Any] | None:
    """(load or store, the value's aval, its source_info) of the first SMEM access of more than one element,
    in program order."""
    for eqn in jaxpr.eqns:
        access = _vector_access(eqn)
        if access is not None:
            return *access, eqn.source_info
        for inner in sub_jaxprs(eqn.params):
            found = first_vector_access(inner)
            if found is not None:
                return found
    return None


def finding(kind: str, value: Any, source_info: Any, learner_file: str) -> Finding:
    moves = f"reads a {tuple(value.shape)} array from" if kind == "load" else f"writes a {tuple(value.shape)} array to"
    return Finding(
        FindingKind.TPU_LOWERING,
        f"This kernel would not compile for a TPU, the only hardware this puzzle runs on: it {moves} an SMEM "
        f"ref in one {kind}, and Mosaic {kind}s SMEM one scalar at a time.",
        explanation=meaning(f"Can only {kind} scalars"), where=info_lines(source_info, learner_file))


def _checked(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def interpret_pallas_call(*args: Any, **kwargs: Any) -> Any:
        session = active.session
        if session is not None and session.tpu_block_rules:
            found = first_vector_access(kwargs["jaxpr"])
            if found is not None:
                raise StrictViolation(finding(*found, session.learner_file))
        return original(*args, **kwargs)

    return interpret_pallas_call


def install() -> None:
    """Read each kernel's SMEM accesses before the TPU interpreter runs it (idempotent)."""
    global _installed
    if not _installed:
        interpreter = jax_private.interpreter()
        interpreter.interpret_pallas_call = _checked(interpreter.interpret_pallas_call)
        _installed = True
