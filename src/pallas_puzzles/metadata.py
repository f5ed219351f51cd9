"""The course metadata: one TOML file (``puzzles.toml``) drives everything.

Listing, watching, checking, packaging and the course-integrity tests all read
the puzzle table from here; nothing else hard-codes puzzle numbers or names.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from typing import Any

from pallas_puzzles import backends
from pallas_puzzles.backends import Backend
from pallas_puzzles.errors import UserError

# A check's time limit, unless a puzzle sets its own: generous against what the
# reference solution needs on a slow machine, but seconds, not minutes.
TIME_LIMIT_FLOOR = 12.0
TIME_LIMIT_FACTOR = 8.0


@dataclass(frozen=True)
class InputSpec:
    """One argument of a puzzle's entry point, generated deterministically."""

    name: str
    shape: tuple[str | int, ...]
    dtype: str = "float32"
    low: float = -0.5
    high: float = 0.5

    def concrete_shape(self, sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(sizes[d] if isinstance(d, str) else int(d) for d in self.shape)


@dataclass(frozen=True)
class Budget:
    """What an efficiency puzzle's kernel may cost on the model's TPU (0: no limit)."""

    traffic: float = 0.0  # HBM bytes moved, as a multiple of the minimum (inputs read once, output written once)
    time: float = 0.0  # estimated time, as a multiple of the ideal (minimum traffic, peak compute, one step)
    vmem: bool = True  # blocks and scratch must fit the chip's default VMEM limit


@dataclass(frozen=True)
class Reshape:
    """How one shape case moves an input away from the default range: value * scale + shift.

    Declared per case in puzzles.toml (`distributions`), where the numerics are the
    lesson: all-negative rows, large magnitudes, an offset that makes cancellation visible.
    """

    input: str
    shift: float = 0.0
    scale: float = 1.0

    def describe(self) -> str:
        parts = [f"scaled by {self.scale:g}"] if self.scale != 1.0 else []
        if self.shift:
            parts.append(f"shifted by {self.shift:+g}")
        return f"{self.input} {' and '.join(parts)}" if parts else ""


@dataclass(frozen=True)
class Puzzle:
    number: int
    name: str
    title: str
    file: str
    entry: str
    summary: str
    hints: tuple[str, ...]
    inputs: tuple[InputSpec, ...]
    cases: dict[str, tuple[dict[str, int], ...]]
    backends: tuple[str, ...]
    rtol: float = 1e-5
    atol: float = 1e-5
    tour: bool = False
    sequential_grid: bool = False
    tpu_only_idiom: str = ""
    time_limit: float = 0.0  # 0: derived from reference_seconds
    reference_seconds: float = 0.0  # what a cold check of the reference solution takes (measured)
    spec: str = ""  # spec module name under pallas_puzzles.specs; defaults to the puzzle name
    min_jax: str = ""  # the oldest jax whose Pallas has every API the puzzle uses ("" : any)
    cores: int = 1  # TensorCores the TPU interpreter simulates (parallel grid axes are split over them)
    detect_races: bool = False  # the interpreter's race detector: DMAs in flight, cores sharing a block
    budget: Budget | None = None  # efficiency puzzles: graded on the cost model too
    # Per shape case (by index, repeating): how its inputs depart from the default range.
    distributions: tuple[tuple[Reshape, ...], ...] = ()

    @property
    def label(self) -> str:
        return f"{self.number:02d} {self.name}"

    def distribution(self, case_index: int) -> tuple[Reshape, ...]:
        """The input reshapes of one shape case (none when the puzzle declares none)."""
        return self.distributions[case_index % len(self.distributions)] if self.distributions else ()

    def cases_for(self, backend: Backend) -> tuple[dict[str, int], ...]:
        """Shape cases for a backend; the interpreter's cases are the default."""
        return self.cases.get(backend.cases) or self.cases[backends.INTERPRET.cases]

    def supports(self, backend: Backend) -> bool:
        return backend.name in self.backends

    @property
    def tpu_only(self) -> bool:
        """A TPU is the only hardware the puzzle runs on: its kernels must follow Mosaic's block rules."""
        return self.supports(backends.TPU) and not self.supports(backends.GPU)

    @property
    def limit_seconds(self) -> float:
        """How long a check may run before it is stopped (PALLAS_PUZZLES_TIME_LIMIT overrides)."""
        if self.time_limit:
            return self.time_limit
        return max(TIME_LIMIT_FLOOR, TIME_LIMIT_FACTOR * self.reference_seconds)


@dataclass(frozen=True)
class Course:
    title: str
    puzzles: tuple[Puzzle, ...]

    @property
    def counted(self) -> tuple[Puzzle, ...]:
        """Puzzles that count towards progress (the guided tour does not)."""
        return tuple(p for p in self.puzzles if not p.tour)

    def find(self, key: str | int) -> Puzzle:
        """Resolve a puzzle by number ("7", 7, "07") or by name ("long_sum")."""
        text = str(key).strip()
        for puzzle in self.puzzles:
            if text.isdigit() and int(text) == puzzle.number:
                return puzzle
            if text.lower() in (puzzle.name, puzzle.name.replace("_", "-"), puzzle.file):
                return puzzle
        numbers = [p.number for p in self.puzzles]
        known = f"{min(numbers)} to {max(numbers)}"  # the course is numbered without gaps (a test holds it so)
        raise UserError(f"There is no puzzle '{text}'; puzzles are numbered {known} (or use a name from `pallas-puzzles list`).")

    def after(self, puzzle: Puzzle) -> Puzzle | None:
        index = self.puzzles.index(puzzle)
        return self.puzzles[index + 1] if index + 1 < len(self.puzzles) else None

    def by_file(self, filename: str) -> Puzzle | None:
        return next((p for p in self.puzzles if p.file == filename), None)


def _parse_puzzle(raw: dict[str, Any]) -> Puzzle:
    unknown = set(raw) - {f.name for f in fields(Puzzle)}
    if unknown:  # a misspelt key would otherwise be ignored without a word
        raise ValueError(f"puzzles.toml: puzzle {raw.get('number')} has unknown keys {sorted(unknown)}")
    inputs = tuple(
        InputSpec(
            name=item["name"],
            shape=tuple(item["shape"]),
            dtype=item.get("dtype", "float32"),
            low=float(item.get("low", -0.5)),
            high=float(item.get("high", 0.5)),
        )
        for item in raw.get("inputs", [])
    )
    cases = {backend: tuple(dict(c) for c in raw_cases) for backend, raw_cases in raw["cases"].items()}
    named = set(raw.get("backends", ())) | set(cases)
    if not named <= set(backends.REGISTRY):
        raise ValueError(f"puzzles.toml: puzzle {raw.get('number')} names unknown backends {sorted(named - set(backends.REGISTRY))}")
    return Puzzle(
        number=int(raw["number"]),
        name=raw["name"],
        title=raw["title"],
        file=raw["file"],
        entry=raw["entry"],
        summary=raw.get("summary", ""),
        hints=tuple(raw.get("hints", ())),
        inputs=inputs,
        cases=cases,
        backends=tuple(raw.get("backends", backends.REGISTRY)),
        rtol=float(raw.get("rtol", 1e-5)),
        atol=float(raw.get("atol", 1e-5)),
        tour=bool(raw.get("tour", False)),
        sequential_grid=bool(raw.get("sequential_grid", False)),
        tpu_only_idiom=raw.get("tpu_only_idiom", ""),
        time_limit=float(raw.get("time_limit", 0.0)),
        reference_seconds=float(raw.get("reference_seconds", 0.0)),
        spec=raw.get("spec", raw["name"]),
        min_jax=str(raw.get("min_jax", "")),
        cores=int(raw.get("cores", 1)),
        detect_races=bool(raw.get("detect_races", False)),
        budget=Budget(**raw["budget"]) if "budget" in raw else None,
        distributions=_parse_distributions(raw),
    )


def _parse_distributions(raw: dict[str, Any]) -> tuple[tuple[Reshape, ...], ...]:
    names = {item["name"] for item in raw.get("inputs", [])}
    out = []
    for case in raw.get("distributions", []):
        if not set(case) <= names:
            raise ValueError(f"puzzles.toml: puzzle {raw.get('number')} reshapes unknown inputs {sorted(set(case) - names)}")
        out.append(tuple(Reshape(input=name, shift=float(how.get("shift", 0.0)), scale=float(how.get("scale", 1.0)))
                         for name, how in case.items()))
    return tuple(out)


@functools.cache
def load_course() -> Course:
    text = resources.files("pallas_puzzles").joinpath("puzzles.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    puzzles = tuple(sorted((_parse_puzzle(p) for p in data["puzzle"]), key=lambda p: p.number))
    return Course(title=data.get("course", {}).get("title", "Pallas Puzzles"), puzzles=puzzles)
