"""Learner-like edits of a kernel file, made on its syntax tree (the stdlib `ast` module).

Each operator finds its sites in a parsed solution and edits one site of a copy
of the tree; `mutants_of` returns one mutant per (operator, site). A mutant's id
names the operator and the source text it changed, so it survives edits
elsewhere in the file (line numbers do not): "cdiv-floor: pl.cdiv(n, B)".
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Site = tuple[ast.AST, int]  # a node and which variant of the edit (e.g. which pair of results to swap)


@dataclass(frozen=True)
class Mutant:
    id: str  # "operator: source text" (plus " #k" for the k-th identical site)
    operator: str
    line: int
    before: str  # the site's source text
    source: str  # the whole mutated file


def _is_call(node: ast.AST, name: str) -> bool:
    """A call of `name` however it is reached: `pl.cdiv(...)`, `cdiv(...)`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == name) or (isinstance(func, ast.Name) and func.id == name)


def _is_when(node: ast.AST) -> bool:
    return _is_call(node, "when") and len(node.args) == 1  # type: ignore[attr-defined]


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST | None) -> None:
    """Put `new` where `old` is (None: drop it from its list, leaving `pass` in an emptied body)."""
    parent = _parents(tree)[old]
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list) and any(item is old for item in value):
            at = next(n for n, item in enumerate(value) if item is old)
            if new is None:
                del value[at]
                if not value and field in ("body", "orelse"):
                    value.append(ast.Pass())
            else:
                value[at] = new
            return
    raise ValueError("node not found under its parent")


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


# --- the operators: sites(tree) -> sites; edit(tree, node, variant) changes the tree in place ---

def _cdiv_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if _is_call(n, "cdiv") and len(n.args) == 2)


def _cdiv_floor(tree: ast.AST, node: ast.Call, _: int) -> None:
    _replace(tree, node, ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1]))


def _cdiv_floor_plus_one(tree: ast.AST, node: ast.Call, _: int) -> None:
    floor = ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1])
    _replace(tree, node, ast.BinOp(floor, ast.Add(), ast.Constant(1)))


def _index_map_sites(tree: ast.AST) -> Iterator[Site]:
    for call in ast.walk(tree):
        if not _is_call(call, "BlockSpec"):
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(arg, ast.Lambda) and isinstance(arg.body, ast.Tuple):
                items = [ast.unparse(e) for e in arg.body.elts]
                yield from ((arg, k) for k in range(len(items) - 1) if items[k] != items[k + 1])


def _swap_results(tree: ast.AST, node: ast.Lambda, k: int) -> None:
    elts = node.body.elts  # type: ignore[attr-defined]
    elts[k], elts[k + 1] = elts[k + 1], elts[k]


def _ds_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if _is_call(n, "ds") and n.args)


def _ds_shift(step: int) -> Callable[[ast.AST, ast.Call, int], None]:
    def edit(tree: ast.AST, node: ast.Call, _: int) -> None:
        node.args[0] = ast.BinOp(node.args[0], ast.Add() if step > 0 else ast.Sub(), ast.Constant(abs(step)))
    return edit


def _wait_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if isinstance(n, ast.Expr) and _is_call(n.value, "wait"))


def _drop(tree: ast.AST, node: ast.AST, _: int) -> None:
    _replace(tree, node, None)


def _semaphore_sites(tree: ast.AST) -> Iterator[Site]:
    for n in ast.walk(tree):
        if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "at"
                and isinstance(n.value.value, ast.Name) and "sem" in n.value.value.id.lower()
                and not (isinstance(n.slice, ast.Constant) and n.slice.value == 0)):
            yield n, 0


def _share_semaphore(tree: ast.AST, node: ast.Subscript, _: int) -> None:
    node.slice = ast.Constant(0)


def _when_sites(tree: ast.AST) -> Iterator[Site]:
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and any(_is_when(d) for d in n.decorator_list):
            yield n, 0
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and _is_when(n.value.func):
            yield n, 0


def _remove_when(tree: ast.AST, node: ast.AST, _: int) -> None:
    """The guarded code runs at every step: the decorator goes and the function is called in its place."""
    if isinstance(node, ast.FunctionDef):
        node.decorator_list = [d for d in node.decorator_list if not _is_when(d)]
        parent = _parents(tree)[node]
        body = next(v for _, v in ast.iter_fields(parent) if isinstance(v, list) and any(i is node for i in v))
        at = next(n for n, item in enumerate(body) if item is node)
        body.insert(at + 1, ast.Expr(ast.Call(ast.Name(node.name), [], [])))
    else:
        node.value = ast.Call(node.value.args[0], [], [])  # type: ignore[attr-defined]


def _negate_when(tree: ast.AST, node: ast.AST, _: int) -> None:
    """`jnp.logical_not(cond)` where the file imports jnp, `~(cond)` where it does not (a file
    that would only fail on an unknown name tells nothing about the checker)."""
    when = (next(d for d in node.decorator_list if _is_when(d)) if isinstance(node, ast.FunctionDef)
            else node.value.func)  # type: ignore[attr-defined]
    imports_jnp = any(alias.asname == "jnp" for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names)
    when.args[0] = (ast.Call(_expr("jnp.logical_not"), [when.args[0]], []) if imports_jnp
                    else ast.UnaryOp(ast.Invert(), when.args[0]))


_SWAPPED = {"arbitrary": "parallel", "parallel": "arbitrary", "ARBITRARY": "PARALLEL", "PARALLEL": "ARBITRARY"}


def _semantics_sites(tree: ast.AST) -> Iterator[Site]:
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg == "dimension_semantics":
            for item in ast.walk(n.value):
                if (isinstance(item, ast.Constant) and item.value in _SWAPPED) or (
                        isinstance(item, ast.Attribute) and item.attr in _SWAPPED):
                    yield item, 0


def _swap_semantics(tree: ast.AST, node: ast.AST, _: int) -> None:
    if isinstance(node, ast.Constant):
        node.value = _SWAPPED[node.value]
    else:
        node.attr = _SWAPPED[node.attr]  # type: ignore[attr-defined]


def _minus_inf_sites(tree: ast.AST) -> Iterator[Site]:
    for n in ast.walk(tree):
        if (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Attribute)
                and n.operand.attr == "inf"):
            yield n, 0


def _zero_instead(tree: ast.AST, node: ast.AST, _: int) -> None:
    _replace(tree, node, ast.Constant(0.0))


def _preferred_type_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((k, 0) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "preferred_element_type")


def _mask_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if _is_call(n, "where") and len(n.args) == 3)


def _unmasked(tree: ast.AST, node: ast.Call, _: int) -> None:
    _replace(tree, node, node.args[1])


# --- across chips (puzzles 31-36): neighbours, signals, semaphores and slots ---

_PARTNER = {"left": "right", "right": "left", "to": "sender", "sender": "to"}  # a device and its other neighbour


def _bound_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | {
        a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}


def _device_id_sites(tree: ast.AST) -> Iterator[Site]:
    """A `device_id={axis: neighbour}` whose other neighbour the file also names."""
    bound = _bound_names(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg == "device_id" and isinstance(n.value, ast.Dict):
            for value in n.value.values:
                if isinstance(value, ast.Name) and _PARTNER.get(value.id) in bound:
                    yield value, 0


def _flip_device(tree: ast.AST, node: ast.Name, _: int) -> None:
    node.id = _PARTNER[node.id]


def _ring_step_sites(tree: ast.AST) -> Iterator[Site]:
    """`+ 1` or `- 1` inside lax.rem's first operand: a step round the ring."""
    for call in ast.walk(tree):
        if _is_call(call, "rem") and call.args:  # type: ignore[attr-defined]
            for n in ast.walk(call.args[0]):  # type: ignore[attr-defined]
                if (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
                        and isinstance(n.right, ast.Constant) and n.right.value == 1):
                    yield n, 0


def _flip_step(tree: ast.AST, node: ast.BinOp, _: int) -> None:
    node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()


def _signal_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if _is_call(n, "semaphore_signal") and len(n.args) >= 2
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, int))


def _signal_more(tree: ast.AST, node: ast.Call, _: int) -> None:
    node.args[1] = ast.Constant(node.args[1].value + 1)  # type: ignore[attr-defined]


def _remote_copy_sites(tree: ast.AST) -> Iterator[Site]:
    yield from ((n, 0) for n in ast.walk(tree) if _is_call(n, "make_async_remote_copy") and len(n.args) >= 4)


def _swap_send_receive(tree: ast.AST, node: ast.Call, _: int) -> None:
    node.args[2], node.args[3] = node.args[3], node.args[2]


def _slot_sites(tree: ast.AST) -> Iterator[Site]:
    """A count of slots: a 2 in a VMEM scratch shape, or the size of an array of semaphores."""
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Tuple):
            continue
        if _is_call(call, "VMEM"):
            yield from ((e, 0) for e in call.args[0].elts if isinstance(e, ast.Constant) and e.value == 2)
        elif _is_call(call, "DMA") or _is_call(call, "REGULAR"):
            yield from ((e, 0) for e in call.args[0].elts)


def _one_slot_fewer(tree: ast.AST, node: ast.expr, _: int) -> None:
    _replace(tree, node, ast.BinOp(node, ast.Sub(), ast.Constant(1)) if not isinstance(node, ast.Constant)
             else ast.Constant(node.value - 1))


Operator = tuple[str, Callable[[ast.AST], Iterator[Site]], Callable[..., None]]
OPERATORS: tuple[Operator, ...] = (
    ("cdiv-floor", _cdiv_sites, _cdiv_floor),
    ("cdiv-floor-plus-one", _cdiv_sites, _cdiv_floor_plus_one),
    ("index-map-swap", _index_map_sites, _swap_results),
    ("ds-start-plus-one", _ds_sites, _ds_shift(1)),
    ("ds-start-minus-one", _ds_sites, _ds_shift(-1)),
    ("wait-dropped", _wait_sites, _drop),
    ("semaphore-shared", _semaphore_sites, _share_semaphore),
    ("when-removed", _when_sites, _remove_when),
    ("when-negated", _when_sites, _negate_when),
    ("semantics-swapped", _semantics_sites, _swap_semantics),
    ("max-init-zero", _minus_inf_sites, _zero_instead),
    ("preferred-type-dropped", _preferred_type_sites, _drop),
    ("mask-removed", _mask_sites, _unmasked),
    # across chips
    ("device-id-flipped", _device_id_sites, _flip_device),
    ("ring-step-flipped", _ring_step_sites, _flip_step),
    ("signal-amount-changed", _signal_sites, _signal_more),
    ("send-receive-swapped", _remote_copy_sites, _swap_send_receive),
    ("slot-count-reduced", _slot_sites, _one_slot_fewer),
)


def _label(node: ast.AST, variant: int, source: str) -> str:
    """The site as the learner reads it: the source text (a pair's position for a swap)."""
    if isinstance(node, ast.FunctionDef):
        text = "@" + ast.unparse(next(d for d in node.decorator_list if _is_when(d)))
    else:
        text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return f"{text} [{variant}<->{variant + 1}]" if isinstance(node, ast.Lambda) else text


def _for_reading(tree: ast.Module) -> set[int]:
    """Nodes a check never runs: the file's own `spec` (the checker keeps its copy) and the `__main__` block."""
    skipped = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name == "spec")
               or (isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))]
    return {id(node) for top in skipped for node in ast.walk(top)}


def mutants_of(source: str) -> list[Mutant]:
    """Every mutant of a solution's kernels and launcher, in a stable order."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    skipped = _for_reading(tree)
    out: list[Mutant] = []
    for name, sites, edit in OPERATORS:
        seen: dict[str, int] = {}
        for node, variant in sites(tree):
            if id(node) in skipped:
                continue
            label = _label(node, variant, source)
            seen[label] = seen.get(label, 0) + 1
            mutant_id = f"{name}: {label}" + (f" #{seen[label]}" if seen[label] > 1 else "")
            copied = copy.deepcopy(tree)
            target = list(ast.walk(copied))[nodes.index(node)]
            edit(copied, target, variant)
            ast.fix_missing_locations(copied)
            out.append(Mutant(mutant_id, name, getattr(node, "lineno", 0), label, ast.unparse(copied)))
    return out
