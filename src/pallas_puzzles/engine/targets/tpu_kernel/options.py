"""A puzzle's `target_options` for the tpu-kernel target: which of the chapter's rules apply.

```toml
[chapter.puzzle.target_options]
in_place = "cache"                                 # this input must be updated in place (input_output_aliases)
run_time_grid = "count"                            # this input holds how many leading rows of the first are real
random = { key = "key", keep = 0.75, rows = 8 }   # random numbers drawn in the kernel (see randomness.py)
```

Read without jax: the CLI validates a course before any checker starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_KEYS = {"in_place", "run_time_grid", "random"}
_RANDOM_KEYS = {"key", "keep", "rows"}


@dataclass(frozen=True)
class RandomOptions:
    key: str  # the input holding the key's data (jax.random.key_data: two uint32 words)
    keep: float  # the probability an element is kept
    rows: int  # rows per block: each block must draw numbers of its own


@dataclass(frozen=True)
class KernelOptions:
    in_place: str = ""
    run_time_grid: str = ""
    random: RandomOptions | None = None


def parse(options: Mapping[str, Any]) -> KernelOptions:
    """The options as data; call problems() first, this assumes they are sound."""
    random = options.get("random")
    return KernelOptions(
        in_place=str(options.get("in_place", "")),
        run_time_grid=str(options.get("run_time_grid", "")),
        random=RandomOptions(str(random["key"]), float(random["keep"]), int(random["rows"])) if random else None,
    )


def problems(options: Mapping[str, Any]) -> list[str]:
    """One sentence per thing wrong with a puzzle's target_options (empty when they are sound)."""
    found = [f"unknown target option '{key}'" for key in sorted(set(options) - _KEYS)]
    for key in ("in_place", "run_time_grid"):
        if key in options and (not isinstance(options[key], str) or not options[key]):
            found.append(f"target_options.{key} must name one of the puzzle's inputs")
    random = options.get("random")
    if random is not None:
        if not isinstance(random, Mapping) or set(random) != _RANDOM_KEYS:
            found.append("target_options.random must give exactly key (an input's name), keep and rows")
        elif not (isinstance(random["key"], str) and 0 < float(random["keep"]) < 1 and int(random["rows"]) > 0):
            found.append("target_options.random: key names an input, 0 < keep < 1, rows > 0")
    return found
