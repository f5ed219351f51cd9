"""The Blackwell target: tcgen05, tensor memory and clusters in JAX's GPU interpreter (target.py)."""
