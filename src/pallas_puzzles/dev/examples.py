"""A course's worked examples of wrong and of unusual-but-right kernels, written as edits to a solution.

`mistakes.toml` lists wrong kernels (`[[mistake]]`: the finding kind each must produce and the
text of the line it must name); `correct.toml` lists correct but unusual ones (`[[correct]]`)
that must pass. Each is the puzzle's reference solution with a few edits (`old` occurs exactly
once and becomes `new`), so an example stays in step with the solution it changes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import CourseError
from pallas_puzzles.findings import FindingKind

MISTAKES = "mistakes.toml"
CORRECT = "correct.toml"
TABLE = {MISTAKES: "mistake", CORRECT: "correct"}


@dataclass(frozen=True)
class Edit:
    old: str
    new: str


@dataclass(frozen=True)
class Example:
    name: str
    puzzle: str  # the puzzle's name
    why: str
    edits: tuple[Edit, ...]
    must_pass: bool  # correct.toml: it must pass; mistakes.toml: it must fail as declared
    kind: str = ""  # a mistake's finding kind (its id)
    line: str = ""  # text of the learner line a mistake's finding must name ("" : none)
    # A mistake the hardware may run right, and why (a race it usually wins, padding it fills with zeros):
    # the interpreter must fail it; on a GPU or TPU a pass is no disagreement ("": it must fail there too).
    hardware: str = ""

    @property
    def hardware_may_pass(self) -> str:
        """Why a GPU or TPU may run this mistake right ("" : it must fail there too): as declared, or because
        its kind is about what only the interpreter counts or can run."""
        if self.must_pass:
            return ""
        if self.hardware:
            return self.hardware
        try:
            kind = FindingKind.by_id(self.kind)
        except KeyError:  # dev check reports the unknown kind
            return ""
        if kind.is_budget:
            return "right numbers over a cost budget that only the interpreter counts"
        if kind is FindingKind.NOT_ON_CPU:
            return "right on a GPU; only JAX's interpreter cannot run it"
        return ""


def _example(raw: dict[str, Any], file: str, where: Path) -> Example:
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise CourseError(f"{where}: every [[{TABLE[file]}]] needs a `name`.")
    edits = raw.get("edits")
    if not isinstance(edits, list) or not edits or not all(isinstance(e, dict) and {"old", "new"} <= set(e)
                                                           for e in edits):
        raise CourseError(f"{where}: {name} needs one or more [[{TABLE[file]}.edits]] with `old` and `new`.")
    return Example(name=name, puzzle=str(raw.get("puzzle", "")), why=str(raw.get("why", "")),
                   edits=tuple(Edit(str(e["old"]), str(e["new"])) for e in edits), must_pass=file == CORRECT,
                   kind=str(raw.get("kind", "")), line=str(raw.get("line", "")),
                   hardware=str(raw.get("hardware", "")))


def load(folder: Path, file: str) -> list[Example]:
    """The examples in a course folder's `file` (none when it has no such file)."""
    where = folder / file
    if not where.is_file():
        return []
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"{where} is not valid TOML ({exc}).") from None
    return [_example(raw, file, where) for raw in data.get(TABLE[file], [])]


def problems(examples: list[Example], course: Course) -> list[tuple[str, str]]:
    """(example name, what is wrong) for what can be told without running anything."""
    found: list[tuple[str, str]] = []
    names = [e.name for e in examples]
    found += [(n, "the name is used more than once") for n in sorted({n for n in names if names.count(n) > 1})]
    for example in examples:
        if not course.has(example.puzzle):
            found.append((example.name, f"names the puzzle '{example.puzzle}', which the course does not have"))
            continue
        if example.must_pass and example.hardware:
            found.append((example.name, "declares `hardware`, which only a mistake may: a correct kernel must "
                                        "pass everywhere"))
        if not example.must_pass:
            try:
                FindingKind.by_id(example.kind)
            except KeyError:
                found.append((example.name, f"declares the finding kind '{example.kind}', which does not exist"))
        try:
            source(example, course)
        except ValueError as exc:
            found.append((example.name, str(exc)))
    return found


def source(example: Example, course: Course) -> str:
    """The example's text: its puzzle's solution with its edits; ValueError when an edit does not apply."""
    try:
        text = course.find(example.puzzle).solution_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"its puzzle's solution cannot be read ({exc.strerror or exc})") from None
    for number, edit in enumerate(example.edits, start=1):
        count = text.count(edit.old)
        if count != 1:
            raise ValueError(f"edit {number}'s `old` text occurs {count} times in the solution; it must occur once")
        text = text.replace(edit.old, edit.new)
    return text


def build(example: Example, course: Course, folder: Path) -> Path:
    """Write the example as a learner file in `folder`."""
    path = folder / f"{example.name}.py"
    path.write_text(source(example, course), encoding="utf-8")
    return path
