"""The performance model: HBM traffic, VMEM and an estimated time from a check's call layouts (no jax)."""
