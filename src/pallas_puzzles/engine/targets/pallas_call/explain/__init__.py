"""Turning failures into findings in the learner's terms: `source` finds the learner's
lines, `meanings` says what an error usually means in Pallas, `runtime` explains errors
raised while a kernel runs, and `lowering` those from the TPU lowering check."""
