"""`mosaic-gpu`: plgpu.kernel kernels checked on a CPU in JAX's GPU interpreter (`target`), with its hooks,
the CUDA lowering pass, lints and findings. Nothing here imports jax at module level.
"""
