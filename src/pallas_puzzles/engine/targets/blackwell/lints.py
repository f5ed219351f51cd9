"""Rules read from the learner's source, because neither the interpreter nor the CPU's CUDA lowering sees them.

The CUDA lowering on a CPU treats every kernel as sm_90 and checks no architecture (measured on jax
0.12.0.1, shared/notes/newer-pallas-on-cpu.md), so a Hopper wgmma in a Blackwell puzzle lowers and
interprets without a word. And three Blackwell features do not run in the interpreter, or run wrong:
a 2-CTA (collective) MMA fails inside it, distributed shared memory is refused, and a partitioned TMA
copy delivers the wrong rows. Each is refused in one sentence rather than graded wrongly.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pallas_puzzles.engine.learner_lines import make_line
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding


@dataclass(frozen=True)
class Rule:
    kind: FindingKind
    sentence: str  # the whole message; the line is given as where


HOPPER = Rule(FindingKind.HOPPER_ON_BLACKWELL,
              "plgpu.{name} is Hopper's warpgroup MMA: on Blackwell the tensor core is driven by "
              "plgpu.tcgen05_mma into a TMEM accumulator, which is what this chapter teaches.")
NOT_ON_CPU = Rule(FindingKind.NOT_ON_CPU,
                  "{what} does not run in JAX's GPU interpreter on a CPU, so this check cannot grade it; "
                  "the chapter's puzzles do not need it.")

# Calls (attribute or name) -> the rule they break.
CALLS = {"wgmma": HOPPER, "wgmma_wait": HOPPER, "cluster_ref": NOT_ON_CPU}
# Keyword arguments of any call -> what they ask for (the CPU cannot run it).
KEYWORDS = {"collective_axis": "A 2-CTA (collective) tcgen05 MMA",
            "leader_tracked": "A partitioned, leader-tracked TMA copy"}
WHAT = {"cluster_ref": "Distributed shared memory (plgpu.cluster_ref)", "CopyPartition": "A partitioned TMA copy"}


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _finding(rule: Rule, file: str, line: int, **words: str) -> Finding:
    return Finding(rule.kind, rule.sentence.format(**words), where=(make_line(file, line),))


def check(file: str, text: str) -> Finding | None:
    """The first rule the source breaks, with its line; None when it breaks none (or does not parse)."""
    try:
        tree = ast.parse(text, file)
    except SyntaxError:
        return None
    found: list[tuple[int, Finding]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _called_name(node)
            rule = CALLS.get(name)
            if rule is not None:
                found.append((node.lineno, _finding(rule, file, node.lineno, name=name,
                                                    what=WHAT.get(name, name))))
            for item in node.keywords:
                if item.arg in KEYWORDS and not (isinstance(item.value, ast.Constant) and item.value.value is None):
                    found.append((node.lineno, _finding(NOT_ON_CPU, file, node.lineno, what=KEYWORDS[item.arg])))
        elif isinstance(node, ast.Attribute) and node.attr == "CopyPartition":
            found.append((node.lineno, _finding(NOT_ON_CPU, file, node.lineno, what=WHAT["CopyPartition"])))
    return min(found, key=lambda pair: pair[0])[1] if found else None
