"""The e2e tier checks kernels in this process (or beside it): JAX starts as a checker's would."""

from helpers import start_jax_as_a_checker_does

start_jax_as_a_checker_does()
