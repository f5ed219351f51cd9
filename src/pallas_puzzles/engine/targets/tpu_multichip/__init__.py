"""`tpu-multichip`: kernels that talk across TPU chips on simulated CPU devices (`target`), with its
options, the interpreter's hooks, the rules their run must keep and the findings."""
