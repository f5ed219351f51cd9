"""What a learner's file may not do, read before it runs: reach into the checker for the answer.

The course's specs, inputs and expected outputs live in the checker's process and files. A file
that imports pallas_puzzles (other than `check_file` under `if __name__ == "__main__":`, which
the checker never runs), reaches modules by name, or walks the call stack or the garbage
collector's objects could read them; one that asks whether its arrays are tracers could show the
checker's trace (engine/integrity) another launcher than the one that runs. Such a line is refused
before anything runs, named in one finding. (Reading the course's files while running is caught by
guard.py.)
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

PACKAGE = "pallas_puzzles"
# Attributes that reach other frames (whose locals hold the checker's answer) or every live object.
STACK = frozenset({"_getframe", "currentframe", "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame",
                   "cr_frame", "stack", "getouterframes", "getinnerframes", "trace", "get_referrers",
                   "get_referents", "get_objects"})
STACK_OWNERS = frozenset({"sys", "inspect", "gc", "traceback"})  # `stack`, `trace` only count on these
BY_NAME = frozenset({"importlib", "__import__"})
TRACER = "Tracer"  # a launcher that behaves one way when traced and another when run hides what it computes


def _main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, the block the checker never runs."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.add(id(body[0].value))
    return found


def _reach(node: ast.AST, docstrings: Callable[[], set[int]]) -> str | None:
    """What this node does to reach the checker, in the learner's words; None when nothing."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [node.module or ""]
    else:
        names = []
    for name in names:
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            return f"imports {name}, the checker's own package"
        if name.split(".")[0] in BY_NAME:
            return f"imports {name}, which imports modules by name (the checker's among them)"
    if isinstance(node, ast.Name) and node.id in BY_NAME:
        return f"uses {node.id}, which imports modules by name (the checker's among them)"
    if (isinstance(node, ast.Name) and node.id == TRACER) or (isinstance(node, ast.Attribute) and node.attr == TRACER):
        return ("tells a traced launcher from a running one (Tracer): the checker both traces and runs the "
                "launcher, and they must do the same")
    if isinstance(node, ast.Attribute):
        owner = node.value.id if isinstance(node.value, ast.Name) else ""
        if node.attr == "modules" and owner == "sys":
            return "reads sys.modules, the modules already loaded (the checker's among them)"
        if node.attr in STACK and (node.attr not in ("stack", "trace") or owner in STACK_OWNERS):
            return f"looks into the call stack or the live objects ({node.attr}), where the checker keeps the answer"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(PACKAGE) \
            and id(node) not in docstrings():
        return f"names the checker's package ('{node.value[:40]}')"
    return None


def scan(tree: ast.Module, filename: str) -> Finding | None:
    """The first line of the parsed file that reaches into the checker; None when there is none."""
    docstrings = functools.cache(lambda: _docstrings(tree))  # read only if a string names the package
    for statement in tree.body:
        if _main_guard(statement):
            continue
        for node in ast.walk(statement):
            what = _reach(node, docstrings)
            if what is not None:
                line = make_line(filename, getattr(node, "lineno", statement.lineno))
                return Finding(FindingKind.REACHES_CHECKER, f"Line {line.line} {what}. An exercise may not reach "
                               "into the checker: the answer must come from your kernel.", where=(line,))
    return None
