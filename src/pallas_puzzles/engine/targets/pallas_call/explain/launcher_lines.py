"""Finding the learner's lines by reading their source: the arguments of a pallas_call
(`grid=`, `out_shape=`, `dimension_semantics=`), the stores a kernel makes to a ref,
and the `pl.when` that guards them.

Runtime errors point at the line that failed; these point at the line that holds
the mistake. The text read is the one the checker ran (linecache, see source.py).
"""

from __future__ import annotations

import ast
import functools
import linecache

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.source_line import SourceLine


@functools.lru_cache(maxsize=16)
def _parse(filename: str, text: str) -> ast.Module | None:
    try:
        return ast.parse(text, filename)
    except SyntaxError:
        return None


def _tree(filename: str) -> ast.Module | None:
    text = "".join(linecache.getlines(filename))
    return _parse(filename, text) if text else None


def _is_pallas_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "pallas_call") or (
        isinstance(func, ast.Name) and func.id == "pallas_call")


def _pallas_call_at(call_line: SourceLine) -> ast.Call | None:
    """The pallas_call(...) expression on or around the line the call ran from."""
    tree = _tree(call_line.file)
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if _is_pallas_call(n)]
    around = [c for c in calls if c.lineno - 1 <= call_line.line <= (c.end_lineno or c.lineno) + 1]
    if around:
        return min(around, key=lambda c: abs(c.lineno - call_line.line))
    return calls[0] if len(calls) == 1 else None  # type: ignore[return-value]


def argument_line(call_line: SourceLine | None, keyword: str) -> SourceLine | None:
    """The line of `keyword=` anywhere inside the learner's pallas_call (grid specs and
    compiler params included); for out_shape also the first positional argument after the kernel."""
    if call_line is None:
        return None
    call = _pallas_call_at(call_line)
    if call is None:
        return None
    for node in ast.walk(call):
        if isinstance(node, ast.keyword) and node.arg == keyword:
            return make_line(call_line.file, node.value.lineno)
    if keyword == "out_shape" and len(call.args) > 1:
        return make_line(call_line.file, call.args[1].lineno)
    return None


def _kernel_def(kernel_line: SourceLine) -> ast.FunctionDef | None:
    tree = _tree(kernel_line.file)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= kernel_line.line <= (node.end_lineno or node.lineno):
            if node.name == kernel_line.function or node.lineno == kernel_line.line:
                return node
    return None


def _stores_to(node: ast.AST, ref: str) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in ast.walk(node):
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, ast.AugAssign) else [])
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == ref:
                out.append(stmt)  # type: ignore[arg-type]
    return out


def store_lines(kernel_line: SourceLine | None, ref: str) -> tuple[SourceLine, ...]:
    """The lines of the kernel that store into `ref` (`ref[...] = ...`, `ref[...] += ...`)."""
    kernel = _kernel_def(kernel_line) if kernel_line is not None else None
    if kernel is None:
        return ()
    assert kernel_line is not None
    lines = sorted({s.lineno for s in _stores_to(kernel, ref)})
    return tuple(make_line(kernel_line.file, n) for n in lines)


def read_lines(kernel_line: SourceLine | None, ref: str) -> tuple[SourceLine, ...]:
    """The lines of the kernel that read `ref` (`... ref[...] ...`, and `ref[...] += ...`, which reads first)."""
    kernel = _kernel_def(kernel_line) if kernel_line is not None else None
    if kernel is None:
        return ()
    assert kernel_line is not None
    found = {node.lineno for node in ast.walk(kernel) if isinstance(node, ast.Subscript)
             and isinstance(node.value, ast.Name) and node.value.id == ref and isinstance(node.ctx, ast.Load)}
    found |= {stmt.lineno for stmt in _stores_to(kernel, ref) if isinstance(stmt, ast.AugAssign)}
    return tuple(make_line(kernel_line.file, n) for n in sorted(found))


def _when_decorator(function: ast.FunctionDef) -> ast.expr | None:
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        func = call.func if call is not None else None
        if isinstance(func, ast.Attribute) and func.attr == "when" or isinstance(func, ast.Name) and func.id == "when":
            return decorator
    return None


def guarding_whens(kernel_line: SourceLine | None, ref: str) -> tuple[SourceLine, ...]:
    """The `pl.when` lines that guard every store into `ref`; () when some store is unguarded."""
    kernel = _kernel_def(kernel_line) if kernel_line is not None else None
    if kernel is None:
        return ()
    assert kernel_line is not None
    stores = _stores_to(kernel, ref)
    guards: dict[int, int] = {}  # store line -> the line of the pl.when around it
    for node in ast.walk(kernel):
        if isinstance(node, ast.FunctionDef) and node is not kernel:
            decorator = _when_decorator(node)
            if decorator is not None:
                for stmt in _stores_to(node, ref):
                    guards[stmt.lineno] = decorator.lineno
    if not stores or any(s.lineno not in guards for s in stores):
        return ()
    return tuple(make_line(kernel_line.file, n) for n in sorted(set(guards.values())))


def _own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of a function's own body, not those of the functions and lambdas defined in it."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def return_lines(kernel_line: SourceLine | None) -> tuple[SourceLine, ...]:
    """The lines where the kernel itself returns a value (`return x + 1`; a loop body's return is not one)."""
    kernel = _kernel_def(kernel_line) if kernel_line is not None else None
    if kernel is None:
        return ()
    assert kernel_line is not None
    found = {n.lineno for n in _own_nodes(kernel) if isinstance(n, ast.Return) and n.value is not None}
    return tuple(make_line(kernel_line.file, n) for n in sorted(found))


def _is_view(value: ast.expr) -> bool:
    """`ref.at[...]`, `ref.reshape(...)`, `ref.bitcast(...)`: another view of a ref, still a ref."""
    while isinstance(value, (ast.Subscript, ast.Call)):
        value = value.value if isinstance(value, ast.Subscript) else value.func
    return isinstance(value, ast.Attribute) and value.attr in ("at", "reshape", "bitcast")


def rebinding_lines(kernel_line: SourceLine | None, ref: str) -> tuple[SourceLine, ...]:
    """The lines that rebind the name of the kernel's `ref` to a value (`z_ref = x + 1`, not `z_ref[...] = ...`)."""
    kernel = _kernel_def(kernel_line) if kernel_line is not None else None
    if kernel is None:
        return ()
    assert kernel_line is not None
    found = {stmt.lineno for stmt in ast.walk(kernel) if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign))
             and any(isinstance(t, ast.Name) and t.id == ref
                     for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]))
             and not (stmt.value is not None and _is_view(stmt.value))}
    return tuple(make_line(kernel_line.file, n) for n in sorted(found))
