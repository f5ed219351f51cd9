"""The checking engine: everything that imports jax, run only inside the checker process.

`checker` runs one puzzle's shape cases; `intercept` is the strict stand-in for
`pl.pallas_call`; `explain` turns failures into findings; `compare` diffs an
output against the spec; `specs` holds the canonical specs and inputs.
"""
