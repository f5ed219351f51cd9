"""Lines inside a call of the learner's launcher, read from the source the checker ran.

launcher_lines.py does this for pl.pallas_call; a Mosaic GPU launcher calls plgpu.kernel, and a
finding about shared memory should point at its `scratch_types=` line rather than the call's first.
"""

from __future__ import annotations

import ast
import functools
import linecache

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.source_line import SourceLine


@functools.lru_cache(maxsize=16)
def _calls(filename: str, text: str, name: str) -> tuple[ast.Call, ...]:
    try:
        tree = ast.parse(text, filename)
    except SyntaxError:
        return ()
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        or (isinstance(node.func, ast.Name) and node.func.id == name)))


def keyword_line(line: SourceLine | None, name: str, keyword: str) -> SourceLine | None:
    """The line of `keyword=` in the call of `name` that spans `line` (a call site inside it)."""
    if line is None:
        return None
    text = "".join(linecache.getlines(line.file))
    spanning = [c for c in _calls(line.file, text, name) if c.lineno <= line.line <= (c.end_lineno or c.lineno)]
    for call in sorted(spanning, key=lambda c: c.lineno, reverse=True):
        for item in call.keywords:
            if item.arg == keyword:
                return make_line(line.file, item.value.lineno)
    return None
