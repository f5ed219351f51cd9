"""The parts of the tpu-multichip target: options, the interpreter's hooks, the rules, the findings."""
