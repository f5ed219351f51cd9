"""A multicast that leaves a block of the cluster without its operand, read from the source after a hang.

A TMA copy with `collective_axes` lands in each block's SMEM only once every block of the cluster has
issued it (each loads its share). Issued under a condition (pl.when, lax.cond, an `if`), some blocks
never do, and every block's barrier waits for ever: the Mosaic GPU target sees a stall, and this
module names the multicast copy it comes from.
"""

from __future__ import annotations

import ast
import linecache

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.source_line import SourceLine

COPY = "copy_gmem_to_smem"
BRANCHES = {"when", "cond", "switch"}  # calls that run a function for some blocks only


def _name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _called(node: ast.AST) -> str:
    return _name(node.func) if isinstance(node, ast.Call) else _name(node)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _conditional(path: list[ast.AST], branched: set[str]) -> bool:
    """Whether a node under `path` (its ancestors, outermost first) runs for some blocks only."""
    for node in path:
        if isinstance(node, (ast.If, ast.IfExp)):
            return True
        if isinstance(node, ast.FunctionDef) and (
                node.name in branched or any(_called(d) in BRANCHES for d in node.decorator_list)):
            return True
    return False


def _walk(node: ast.AST, path: list[ast.AST]):
    yield node, path
    for child in ast.iter_child_nodes(node):
        yield from _walk(child, [*path, node])


def conditional_copy(file: str, barrier: str) -> SourceLine | None:
    """The line of a multicast copy that arrives on `barrier` under a condition; None if there is none."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)), file)
    except SyntaxError:
        return None
    # Functions handed to a branch by name: jax.lax.cond(p, issue, skip), pl.when(p)(issue).
    branched = {name for node in ast.walk(tree) if isinstance(node, ast.Call)
                and (_called(node) in BRANCHES or _called(node.func) in BRANCHES)
                for arg in node.args if isinstance(arg, ast.Name) for name in [arg.id]}
    for node, path in _walk(tree, []):
        if not (isinstance(node, ast.Call) and _called(node) == COPY):
            continue
        multicast = any(k.arg == "collective_axes" and not (isinstance(k.value, ast.Constant) and k.value.value is None)
                        for k in node.keywords)
        arrives = any(barrier in _names(arg) for arg in (*node.args, *(k.value for k in node.keywords)))
        if multicast and arrives and _conditional(path, branched):
            return make_line(file, node.lineno)
    return None
