"""JAX's words said in the learner's (issue 32, item 12): the errors learners meet most, through the real
`verify`, each message naming the learner's line and what happened there, without JAX's jargon."""

from __future__ import annotations

import json
from pathlib import Path

from pallas_puzzles.cli import app

REPO = Path(__file__).resolve().parents[2]

# file -> (a line of the reference solution, the learner's version of it)
MISTAKES = {
    "01_constant_add.py": ("    z_ref[...] = x_ref[...] + 10.0",
                           "    z_ref[...] = (x_ref[...] + 10.0).astype(jnp.bfloat16)"),
    "02_constant_add_blocked.py": ("    z_ref[...] = x_ref[...] + 10.0", "    z_ref[...] = x_ref + 10.0"),
    "03_outer_add.py": ("    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None]",
                        "    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None] + pl.program_id(1)"),
    "04_outer_add_blocked.py": ("    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None]",
                                "    if pl.program_id(0) == 0:\n        pass\n"
                                "    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None]"),
    "07_long_sum.py": ("in_specs=[pl.BlockSpec((B0, t_pad), lambda i: (i, 0))]",
                       "in_specs=[pl.BlockSpec((B0, t_pad), lambda i: (i, 0, 0))]"),
}


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_the_jax_errors_learners_meet_are_said_in_their_terms(workspace, cli):
    exercises = workspace / "exercises"
    for file, (old, new) in MISTAKES.items():
        reference = (REPO / "solutions" / file).read_text()
        assert reference.count(old) == 1, file
        (exercises / file).write_text(reference.replace(old, new))
    result = cli.invoke(app, ["verify", "--all", "--json"])
    document = json.loads(result.stdout)
    said = {}
    for checked in document["checks"]:
        findings = checked["findings"] + [f for case in checked["cases"] for f in case["findings"]]
        if checked["file"].endswith(tuple(MISTAKES)) and findings:
            said[Path(checked["file"]).name] = findings[0]["message"]
    assert set(said) == set(MISTAKES), said
    assert said["01_constant_add.py"] == (
        f"Line {_line_of(exercises / '01_constant_add.py', 'bfloat16')} stores bfloat16 into z_ref, a float32 block: "
        f"the value must have the ref's dtype.")
    assert said["02_constant_add_blocked.py"].endswith(
        "computes with the ref x_ref itself rather than with its values: read them with x_ref[...] first.")
    assert "asks for grid axis 1, but the grid () has 0 axes" in said["03_outer_add.py"]
    assert (f"Line {_line_of(exercises / '04_outer_add_blocked.py', 'if pl.program_id')} puts a value known only "
            f"while the kernel runs") in said["04_outer_add_blocked.py"]
    assert (f"The index_map of in_specs[0] (line {_line_of(exercises / '07_long_sum.py', 'lambda i: (i, 0, 0)')}) "
            f"returns 3 block indices, but its block_shape has 2 dimensions") in said["07_long_sum.py"]
    for message in said.values():
        assert not any(jargon in message for jargon in ("swap", "Tracer", "AbstractRef", "args[0]", "Error:")), message
