"""The checker process: a long-lived child that keeps JAX imported and runs checks.

`client` is the parent's handle on one child, `pool` runs several, `protocol`
holds the typed messages between them and `child` is the child's own loop.
The CLI never imports jax itself.
"""
