"""`tpu-kernel`: the TPU as JAX's current guides write it (`target`): kernels over a TensorCore mesh,
in-place updates, grids sized at run time and random numbers drawn in the kernel, with their rules."""
