"""The strict stand-in for `pl.pallas_call`, in small parts.

`session` holds one shape case's settings and records, `call_reader` reads the
learner's pallas_call arguments, `index_maps` checks them over the whole grid,
`sentinel` marks output elements never written, and `patch` puts it together
and installs it in place of `pl.pallas_call`.
"""
