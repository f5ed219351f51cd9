"""The course as data: chapters and puzzles, read from a course folder by `reader`.

Listing, watching, checking, packaging and the course-integrity tests all read
the puzzles from here; nothing else hard-codes puzzle numbers or names. A puzzle
is known by its `name`; its `number` is only its position in the course.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
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
    """What an efficiency puzzle's kernel may cost on the model's TPU, or a GPU puzzle's on the GPU card
    (perf/gpu_budget.py reads traffic and overlap; 0: no limit)."""

    traffic: float = 0.0  # HBM bytes moved, as a multiple of the minimum (inputs read once, output written once)
    time: float = 0.0  # estimated time, as a multiple of the ideal (minimum traffic, peak compute, one step)
    vmem: bool = True  # blocks and scratch must fit the chip's default VMEM limit
    overlap: float = 0.0  # GPU: the share of copy waits that must find the next copy already in flight


@dataclass(frozen=True)
class Tolerance:
    """How close a result must come to the spec's: |got - expected| <= atol + rtol * |expected|."""

    rtol: float
    atol: float


@dataclass(frozen=True)
class Reshape:
    """How one shape case moves an input away from the default range: value * scale + shift.

    Declared per case in the course file (`distributions`), where the numerics are the
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
    name: str  # the identity: progress, hints, input seeds and stored verdicts use it
    number: int  # the position in the course (the tour is 0); shown to learners, never stored
    chapter: str  # the name of the chapter it belongs to
    folder: Path  # the course folder: course.toml and specs/
    files: Path  # holds exercises/ and solutions/: the course folder, or for the built-in course a clone's top
    title: str
    file: str
    entry: str
    summary: str
    hints: tuple[str, ...]
    inputs: tuple[InputSpec, ...]
    cases: dict[str, tuple[dict[str, int], ...]]
    backends: tuple[str, ...]
    target: str  # the target that runs its kernels on the CPU (engine/targets/)
    rtol: float = 1e-5
    atol: float = 1e-5
    # Per backend name, where its hardware rounds otherwise than the interpreter (a GPU's dots take TF32
    # operands): replaces rtol and atol there.
    tolerance: dict[str, Tolerance] = field(default_factory=dict)
    tour: bool = False
    sequential_grid: bool = False
    tpu_only_idiom: str = ""
    time_limit: float = 0.0  # 0: derived from reference_seconds
    reference_seconds: float = 0.0  # a cold check of the reference solution (reference_times.toml)
    spec: str = ""  # the spec module's name under specs/; defaults to the puzzle name
    min_jax: str = ""  # the oldest jax whose Pallas has every API the puzzle uses ("" : any)
    cores: int = 1  # TensorCores the TPU interpreter simulates (parallel grid axes are split over them)
    detect_races: bool = False  # the interpreter's race detector: DMAs in flight, cores sharing a block
    budget: Budget | None = None  # efficiency puzzles: graded on the cost model too
    # Per shape case (by index, repeating): how its inputs depart from the default range.
    distributions: tuple[tuple[Reshape, ...], ...] = ()
    target_options: dict[str, Any] = field(default_factory=dict)  # read by the puzzle's target
    # Computing operations (JAX primitive names, e.g. "reduce_sum") the launcher may apply to its kernels'
    # outputs, such as a combine of partial results; everything else must happen inside a kernel.
    launcher_ops: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.number:02d} {self.name}"

    @property
    def stub_path(self) -> Path:
        return self.files / "exercises" / self.file

    @property
    def solution_path(self) -> Path:
        return self.files / "solutions" / self.file

    @property
    def spec_path(self) -> Path:
        return self.folder / "specs" / f"{self.spec or self.name}.py"

    def distribution(self, case_index: int) -> tuple[Reshape, ...]:
        """The input reshapes of one shape case (none when the puzzle declares none)."""
        return self.distributions[case_index % len(self.distributions)] if self.distributions else ()

    def cases_for(self, backend: Backend) -> tuple[dict[str, int], ...]:
        """Shape cases for a backend; the interpreter's cases are the default."""
        return self.cases.get(backend.cases) or self.cases[backends.INTERPRET.cases]

    def own_cases(self, backend: Backend) -> bool:
        """The puzzle gives `backend` shape cases of its own (not the interpreter's)."""
        return backend.cases in self.cases and self.cases[backend.cases] != self.cases_for(backends.INTERPRET)

    def on_cases_of(self, backend: Backend) -> Puzzle:
        """This puzzle as the interpreter checks it on `backend`'s shape cases and tolerance: what the
        hardware's cases can show of a kernel, seen where every check is strict."""
        tolerance = self.tolerance_on(backend)
        return dataclasses.replace(self, cases={**self.cases, backends.INTERPRET.cases: self.cases_for(backend)},
                                   rtol=tolerance.rtol, atol=tolerance.atol, tolerance={})

    def tolerance_on(self, backend: Backend) -> Tolerance:
        """The tolerance of a comparison with the spec on a backend: its own, else the puzzle's rtol and atol."""
        return self.tolerance.get(backend.name) or Tolerance(self.rtol, self.atol)

    def supports(self, backend: Backend) -> bool:
        return backend.name in self.backends

    @property
    def tpu_only(self) -> bool:
        """A TPU is the only hardware the puzzle runs on: its kernels must follow Mosaic's block rules."""
        return self.supports(backends.TPU) and not self.supports(backends.GPU)

    @property
    def revisits_allowed(self) -> bool:
        """May consecutive grid steps write one output block when the kernel declares no dimension_semantics?
        Where the puzzle is a reduction over its grid (sequential_grid), and where a TPU is its only
        hardware: Pallas TPU runs an undeclared axis in order ("arbitrary"); a GPU runs every step at once."""
        return self.sequential_grid or self.tpu_only

    @property
    def limit_seconds(self) -> float:
        """How long a check may run before it is stopped (PALLAS_PUZZLES_TIME_LIMIT overrides)."""
        if self.time_limit:
            return self.time_limit
        return max(TIME_LIMIT_FLOOR, TIME_LIMIT_FACTOR * self.reference_seconds)


@dataclass(frozen=True)
class Chapter:
    name: str
    title: str
    intro: str
    target: str
    number: int  # 1-based position


@dataclass(frozen=True)
class Course:
    name: str  # a stable id, recorded in a workspace's progress
    title: str
    folder: Path  # course.toml, specs/ and the example lists
    files: Path  # exercises/ and solutions/ (see Puzzle.files)
    chapters: tuple[Chapter, ...]
    puzzles: tuple[Puzzle, ...]
    version: str = ""  # the course author's release of it, shown by `list` and `doctor`

    @property
    def heading(self) -> str:
        """"Pallas Puzzles 1.0": the title and, when the course file gives one, the version."""
        return f"{self.title} {self.version}".strip()

    @property
    def counted(self) -> tuple[Puzzle, ...]:
        """Puzzles that count towards progress (the guided tour does not)."""
        return tuple(p for p in self.puzzles if not p.tour)

    def teaches_cost(self, puzzle: Puzzle) -> bool:
        """Whether the performance card teaches something at this puzzle: from the first chapter that grades
        a puzzle on its cost (a `budget`) on. Before it, the card is one line (`perf N` shows it whole)."""
        names = [c.name for c in self.chapters]
        graded = [names.index(p.chapter) for p in self.puzzles if p.budget is not None]
        return bool(graded) and names.index(puzzle.chapter) >= min(graded)

    def chapter_of(self, puzzle: Puzzle) -> Chapter:
        return next(c for c in self.chapters if c.name == puzzle.chapter)

    def in_chapter(self, chapter: Chapter) -> tuple[Puzzle, ...]:
        return tuple(p for p in self.puzzles if p.chapter == chapter.name)

    def has(self, name: str) -> bool:
        return any(p.name == name for p in self.puzzles)

    def find(self, key: str | int) -> Puzzle:
        """Resolve a puzzle by number ("7", 7, "07"), by name ("long_sum", "long-sum") or by file."""
        text = str(key).strip()
        for puzzle in self.puzzles:
            if text.isdigit() and int(text) == puzzle.number:
                return puzzle
            if text.lower() in (puzzle.name, puzzle.name.replace("_", "-"), puzzle.file):
                return puzzle
        close = self._closest(text)
        if close is not None:  # a misspelt name: say the likely one, as git and pip do
            raise UserError(f"There is no puzzle '{text}'; did you mean '{close.name}' (puzzle {close.number})?")
        numbers = [p.number for p in self.puzzles]
        raise UserError(f"There is no puzzle '{text}'; puzzles are numbered {min(numbers)} to {max(numbers)} "
                        f"(or use a name from `pallas-puzzles list`).")

    def _closest(self, text: str) -> Puzzle | None:
        """The puzzle whose name (or file) `text` most likely misspells, if any is close enough."""
        import difflib

        if text.isdigit():
            return None
        spellings = {spelling: p for p in self.puzzles for spelling in (p.name, p.name.replace("_", "-"), p.file)}
        close = difflib.get_close_matches(text.lower(), spellings, n=1, cutoff=0.75)
        return spellings[close[0]] if close else None

    def after(self, puzzle: Puzzle) -> Puzzle | None:
        index = self.puzzles.index(puzzle)
        return self.puzzles[index + 1] if index + 1 < len(self.puzzles) else None

    def by_file(self, filename: str) -> Puzzle | None:
        return next((p for p in self.puzzles if p.file == filename), None)
