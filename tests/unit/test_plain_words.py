"""JAX's and the interpreters' errors said again in the learner's terms (engine/meanings.py)."""

from __future__ import annotations

from pallas_puzzles.engine.meanings import plain_meaning, plain_message
from pallas_puzzles.source_line import SourceLine


def test_a_freed_scoped_buffer_is_named_without_the_interpreters_key():
    """The TPU interpreter's KeyError on a freed run_scoped buffer carries buffer numbers that vary from run
    to run; the learner is told what happened, at the line that used the buffer, and none of them."""
    line = SourceLine(file="k.py", line=58, text="copy.wait()")
    for text in ("KeyError: ('vmem', 102, 0, 0)", "KeyError: ('vmem', 7, 1, 0)"):
        said = plain_message(text, (line,))
        assert said.startswith("Line 58 uses a VMEM buffer of pl.run_scoped after its scope ended")
        assert "102" not in said
        assert "Wait for every copy of a scoped buffer inside the scope" in plain_meaning(text)
    assert plain_message("KeyError: 'x'") == ""
