"""The strict `pallas_call` stand-in that the TPU targets (tpu-interpret, tpu-lowering, device,
tpu-multichip) share: the intercepts (`intercept/`), their explanations (`explain/`), the fast
path, the case runner, the probe, the exact-multiples run and the launcher's traffic."""
