"""Rules read from the learner's source, for what neither JAX's GPU interpreter nor the CPU's CUDA lowering sees.

The CUDA lowering on a CPU treats every kernel as sm_90 and checks no architecture (measured on jax
0.12.0.1, shared/notes/newer-pallas-on-cpu.md), and the interpreter runs Hopper's and Blackwell's
instructions alike: a Blackwell tcgen05 MMA in a Hopper puzzle (or a Hopper wgmma in a Blackwell
one) would pass without a word. Each GPU target names its chapter's rules as a `Rules` table; `check`
is the one scanner for all of them and gives the first rule broken, in one sentence at its line.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case


@dataclass(frozen=True)
class Rule:
    kind: FindingKind
    sentence: str  # the whole message, formatted with {name} and {what}; the line is given as where


@dataclass(frozen=True)
class Rules:
    names: Mapping[str, Rule] = field(default_factory=dict)  # a name used (plgpu.NAME or NAME) -> its rule
    keywords: Mapping[str, Rule] = field(default_factory=dict)  # a keyword of any call, not None -> its rule
    what: Mapping[str, str] = field(default_factory=dict)  # a name or keyword -> its words ({what})


BLACKWELL = Rule(FindingKind.BLACKWELL_ON_HOPPER,
                 "plgpu.{name} is a Blackwell (sm_100) instruction in a Hopper puzzle: Hopper's tensor core is "
                 "driven by plgpu.wgmma with its accumulator in registers (plgpu.ACC), which is what this "
                 "chapter teaches.")
# The tcgen05 MMA and tensor memory (TMEM): Blackwell's alone (jax 0.12's plgpu).
HOPPER = Rules(names=dict.fromkeys(
    ("tcgen05_mma", "tcgen05_commit_arrive", "async_load_tmem", "async_store_tmem", "wait_load_tmem",
     "commit_tmem", "async_copy_smem_to_tmem", "async_copy_scales_to_tmem", "async_copy_sparse_metadata_to_tmem",
     "TMEM", "TMEMLayout"), BLACKWELL))


def _used_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) else ""


def _finding(rule: Rule, file: str, line: int, name: str, what: str) -> tuple[int, Finding]:
    return line, Finding(rule.kind, rule.sentence.format(name=name, what=what), where=(make_line(file, line),))


def check(file: str, text: str, rules: Rules) -> Finding | None:
    """The first rule the source breaks, with its line; None when it breaks none (or does not parse)."""
    try:
        tree = ast.parse(text, file)
    except SyntaxError:
        return None
    found: list[tuple[int, Finding]] = []
    for node in ast.walk(tree):
        name = _used_name(node)
        if name in rules.names:
            found.append(_finding(rules.names[name], file, node.lineno, name, rules.what.get(name, name)))
        if isinstance(node, ast.Call):
            found.extend(_finding(rules.keywords[item.arg], file, node.lineno, item.arg,
                                  rules.what.get(item.arg, item.arg))
                         for item in node.keywords if item.arg in rules.keywords
                         and not (isinstance(item.value, ast.Constant) and item.value.value is None))
    return min(found, key=lambda pair: pair[0])[1] if found else None


def check_case(case: Case, rules: Rules) -> Finding | None:
    """`check` on the learner's file as the checker ran it."""
    file = str(case.learner_file)
    return check(file, "".join(linecache.getlines(file)), rules)
