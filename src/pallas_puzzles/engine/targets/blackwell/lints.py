"""The Blackwell chapter's source rules, for mosaic_gpu/lints.py's scanner (which says why they are read
from the source).

A Hopper wgmma lowers and interprets on a CPU without a word. And three Blackwell features do not run
in the interpreter, or run wrong: a 2-CTA (collective) MMA fails inside it, distributed shared memory
is refused, and a partitioned TMA copy delivers the wrong rows. Each is refused in one sentence rather
than graded wrongly.
"""

from __future__ import annotations

from pallas_puzzles.engine.targets.mosaic_gpu import lints
from pallas_puzzles.engine.targets.mosaic_gpu.lints import Rule, Rules
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

HOPPER = Rule(FindingKind.HOPPER_ON_BLACKWELL,
              "plgpu.{name} is Hopper's warpgroup MMA: on Blackwell the tensor core is driven by "
              "plgpu.tcgen05_mma into a TMEM accumulator, which is what this chapter teaches.")
NOT_ON_CPU = Rule(FindingKind.NOT_ON_CPU,
                  "{what} does not run in JAX's GPU interpreter on a CPU, so this check cannot grade it; "
                  "the chapter's puzzles do not need it.")

RULES = Rules(
    names={"wgmma": HOPPER, "wgmma_wait": HOPPER, "cluster_ref": NOT_ON_CPU, "CopyPartition": NOT_ON_CPU},
    keywords={"collective_axis": NOT_ON_CPU, "leader_tracked": NOT_ON_CPU},
    what={"cluster_ref": "Distributed shared memory (plgpu.cluster_ref)", "CopyPartition": "A partitioned TMA copy",
          "collective_axis": "A 2-CTA (collective) tcgen05 MMA",
          "leader_tracked": "A partitioned, leader-tracked TMA copy"})


def check(file: str, text: str) -> Finding | None:
    """The first Blackwell rule the source breaks, with its line; None when it breaks none."""
    return lints.check(file, text, RULES)
