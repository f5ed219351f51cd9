"""The kernel that never ends of the prepared GPU check (scripts/gpu_check.py's `hang` step).

The constant_add solution's kernel line is replaced by a loop whose condition reads x (always finite
in the checker's cases, which no compiler can know) and whose body stores into z, so neither Triton
nor LLVM may drop the loop as one without effects. Triton lowers and compiles it; the interpreter runs
it until the time limit stops it. (The first form, a counter `(i + 1) % 7` under `i >= 0`, stopped
Triton's lowering with "AssertionError: ('i32', 'i1')" before anything ran: it tested nothing.)
"""

from __future__ import annotations

KERNEL_LINE = "    z_ref[...] = x_ref[...] + 10.0\n"
ENDLESS = ("    def step(i):\n        z_ref[...] = x_ref[...] + 10.0\n        return i + 1\n\n"
           "    jax.lax.while_loop(lambda i: x_ref[0] < jnp.inf, step, 0)  # x is finite: never ends\n")


def endless_kernel(solution: str) -> str | None:
    """The constant_add solution with its kernel made to loop for ever; None when its line has changed."""
    return solution.replace(KERNEL_LINE, ENDLESS) if KERNEL_LINE in solution else None
