"""The Mosaic GPU target's parts: hooks into JAX's GPU interpreter, the CUDA lowering pass, lints and findings.

The target itself is engine/targets/mosaic_gpu.py. Nothing here imports jax at module level.
"""
