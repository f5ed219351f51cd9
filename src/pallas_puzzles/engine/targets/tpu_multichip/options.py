"""A multi-device puzzle's `target_options`: its mesh, how inputs and output are split, what is graded.

```toml
[chapter.puzzle.target_options]
mesh = { x = "D" }          # mesh axes in order: name -> size (a number, or a size name of the shape case)
in_specs = [["x"]]          # one PartitionSpec per input: per dimension a mesh axis, or "" for not split
out_specs = ["x"]           # the output's PartitionSpec
own_barrier = true          # the kernel synchronises itself (collective_id); Pallas's automatic barrier fails
overlap = true              # a product into the output must run between each copy's start and its wait
both_ways = true            # two rings at once: every device sends to both neighbours, both copies in flight
traffic = "all-gather"      # the collective whose minimum the traffic card compares with (see traffic.py)
```

Read without jax: the CLI validates a course before any checker starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.targets.tpu_multichip.traffic import COLLECTIVES

_KEYS = {"mesh", "in_specs", "out_specs", "own_barrier", "overlap", "both_ways", "traffic"}
MAX_DEVICES = 8  # the CPU devices a checker process for this target starts with


@dataclass(frozen=True)
class MeshOptions:
    axes: tuple[tuple[str, str | int], ...]
    in_specs: tuple[tuple[str | None, ...], ...]
    out_specs: tuple[str | None, ...]
    own_barrier: bool = False
    overlap: bool = False
    both_ways: bool = False
    traffic: str = ""

    def shape(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        """The mesh's size along each axis, for one shape case."""
        return tuple(int(sizes[size]) if isinstance(size, str) else int(size) for _, size in self.axes)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)


def _spec(raw: Any) -> tuple[str | None, ...]:
    return tuple(entry or None for entry in raw)


def parse(options: Mapping[str, Any]) -> MeshOptions:
    """The options as data; call problems() first, this assumes they are sound."""
    return MeshOptions(
        axes=tuple((str(k), v) for k, v in dict(options["mesh"]).items()),
        in_specs=tuple(_spec(spec) for spec in options["in_specs"]),
        out_specs=_spec(options["out_specs"]),
        own_barrier=bool(options.get("own_barrier", False)),
        overlap=bool(options.get("overlap", False)),
        both_ways=bool(options.get("both_ways", False)),
        traffic=str(options.get("traffic", "")),
    )


def problems(options: Mapping[str, Any]) -> list[str]:
    """One sentence per thing wrong with a puzzle's target_options (empty when they are sound)."""
    found = [f"unknown target option '{key}'" for key in sorted(set(options) - _KEYS)]
    mesh = options.get("mesh")
    if not isinstance(mesh, Mapping) or not mesh:
        return [*found, "target_options.mesh must name at least one mesh axis and its size, e.g. { x = \"D\" }"]
    if any(not isinstance(v, (str, int)) or isinstance(v, bool) for v in mesh.values()):
        found.append("each mesh axis size must be a number or the name of a shape-case size")
    if any(isinstance(v, int) and not 1 <= v <= MAX_DEVICES for v in mesh.values()):
        found.append(f"a mesh axis may have 1 to {MAX_DEVICES} devices")
    specs = [options.get("out_specs")]
    if not isinstance(options.get("in_specs"), list):
        found.append("target_options.in_specs must be a list with one partition spec per input")
    else:
        specs += options["in_specs"]
    for spec in specs:
        if not isinstance(spec, list) or any(not isinstance(e, str) or (e and e not in mesh) for e in spec):
            found.append(f"the partition spec {spec!r} must list, per dimension, a mesh axis name or \"\"")
    if options.get("traffic", "") not in ("", *COLLECTIVES):
        found.append(f"target_options.traffic must be one of {', '.join(sorted(COLLECTIVES))}")
    return found


def device_blocks(shape: tuple[int, ...], opts: MeshOptions, sizes: dict[str, int]) -> tuple[int, ...]:
    """One cell of the mismatch map per device's share of the output."""
    block = list(shape)
    for dim, axis in enumerate(opts.out_specs):
        if axis and dim < len(block):
            block[dim] = max(1, block[dim] // sizes[axis])
    return tuple(block)
