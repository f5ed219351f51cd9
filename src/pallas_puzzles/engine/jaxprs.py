"""Reading jaxprs without importing JAX: the one place that finds the jaxprs nested in an equation.

Several readers walk a kernel's or a launcher's jaxpr (launcher_graph, the multi-device overlap
reader, the TPU SMEM rule); they go into branches, loop bodies, calls and scoped allocations the same
way, through `sub_jaxprs`. Jaxprs are read through their attributes (eqns, invars, params), so the
test stand-ins and every jax version serve alike.
"""

from __future__ import annotations

from typing import Any


def open_jaxpr(jaxpr: Any) -> Any:
    """The open jaxpr of a ClosedJaxpr (or the jaxpr itself)."""
    return getattr(jaxpr, "jaxpr", jaxpr) if not hasattr(jaxpr, "eqns") else jaxpr


def sub_jaxprs(params: dict[str, Any]) -> list[Any]:
    """Every jaxpr among an equation's parameters (alone, or in a tuple such as cond's branches), open."""
    found = []
    for value in params.values():
        for item in (value if isinstance(value, (tuple, list)) else (value,)):
            if hasattr(open_jaxpr(item), "eqns"):
                found.append(open_jaxpr(item))
    return found
