"""What `dev check` can tell about a course without running a kernel: its files, keys and examples.

Each problem is one sentence about one puzzle (or the course as a whole). Python files are read
with `ast`, never imported, so this part runs without JAX and without running the course's code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.course.reader import COURSE_FILE, TIMES_FILE
from pallas_puzzles.dev import examples
from pallas_puzzles.errors import UserError

# What may sit at the top of a course folder besides its three folders of puzzle files.
TOP_FILES = {COURSE_FILE, TIMES_FILE, examples.MISTAKES, examples.CORRECT, "__init__.py", "py.typed"}
TOP_PREFIXES = ("README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "CHANGELOG", "AUTHORS")
IGNORED = {"__pycache__"}
TODO = "TODO"


@dataclass(frozen=True)
class Problem:
    puzzle: str | None  # the puzzle's name; None when it concerns the course as a whole
    subject: str  # what it is about: "course", "stub", "solution", "spec", "hints", a file, an example
    message: str
    blocking: bool = False  # the subject cannot be checked further (a missing file, a target that cannot load)

    def line(self) -> str:
        return f"{self.puzzle or 'course'}: {self.subject}: {self.message}"


def _tree(path: Path) -> tuple[ast.Module | None, str]:
    """The parsed file, or None and why not."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), ""
    except FileNotFoundError:
        return None, f"{path} is missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path} cannot be read ({exc})"
    except SyntaxError as exc:
        return None, f"{path} has a syntax error at line {exc.lineno}: {exc.msg}"


def _functions(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def puzzle_files(puzzle: Puzzle) -> list[Problem]:
    """The stub, the solution and the spec: there, valid Python, with the functions the checker calls."""
    found: list[Problem] = []

    def add(subject: str, message: str, blocking: bool = False) -> None:
        found.append(Problem(puzzle.name, subject, message, blocking))

    for subject, path in (("stub", puzzle.stub_path), ("solution", puzzle.solution_path)):
        tree, why = _tree(path)
        if tree is None:
            add(subject, why, blocking=True)
            continue
        if puzzle.entry not in _functions(tree):
            add(subject, f"{path.name} defines no function {puzzle.entry}(), the puzzle's entry")
        if "interpret=" in path.read_text(encoding="utf-8"):
            add(subject, f"{path.name} passes interpret= to pallas_call; the checker chooses the backend itself")
    stub_text = puzzle.stub_path.read_text(encoding="utf-8") if puzzle.stub_path.is_file() else None
    if stub_text is not None and not puzzle.tour and TODO not in stub_text:
        add("stub", f"{puzzle.stub_path.name} has no {TODO} marker showing the learner what to write")
    if puzzle.tour and puzzle.solution_path.is_file() and stub_text != puzzle.solution_path.read_text(encoding="utf-8"):
        add("stub", "a tour starts solved: its stub and its solution must be the same file")
    tree, why = _tree(puzzle.spec_path)
    if tree is None:
        add("spec", why, blocking=True)
    elif "spec" not in _functions(tree):
        add("spec", f"{puzzle.spec_path.name} defines no function spec(*inputs)", blocking=True)
    return found


def puzzle_keys(puzzle: Puzzle) -> list[Problem]:
    """Hints, shape cases and the target's options."""
    from pallas_puzzles.engine import targets

    found: list[Problem] = []
    if not puzzle.hints:
        found.append(Problem(puzzle.name, "hints", "the puzzle has no hints; give at least one"))
    cases = puzzle.cases_for(backends.INTERPRET)
    if len({tuple(sorted(c.items())) for c in cases}) < 2:
        found.append(Problem(puzzle.name, "cases", "give at least two different interpret shape cases, so that "
                                                   "a kernel with hard-coded sizes fails"))
    if not puzzle.inputs and not _has_input_maker(puzzle):
        found.append(Problem(puzzle.name, "inputs", "the puzzle declares no `inputs` and its spec has no "
                                                    "make_inputs(sizes, rng)"))
    found += launcher_ops(puzzle) + unused_tolerances(puzzle)
    try:
        target = targets.get(puzzle.target)
    except UserError as exc:
        return [*found, Problem(puzzle.name, "target", exc.message, blocking=True)]
    found += [Problem(puzzle.name, "target_options", text) for text in target.option_problems(puzzle.target_options)]
    return found


def launcher_ops(puzzle: Puzzle) -> list[Problem]:
    """The computing operations a puzzle lets its launcher do: names of JAX operations the checker knows."""
    from pallas_puzzles.engine.integrity.vocabulary import LAYOUT, OPERATIONS

    found = []
    for name in puzzle.launcher_ops:
        if name in LAYOUT:
            found.append(Problem(puzzle.name, "launcher_ops", f"'{name}' only arranges data: every launcher may "
                                                              "do that, so leave it out"))
        elif name not in OPERATIONS:
            found.append(Problem(puzzle.name, "launcher_ops", f"'{name}' is not an operation the checker knows; "
                                 "use JAX primitive names such as reduce_sum, add, mul or max"))
    return found


def unused_tolerances(puzzle: Puzzle) -> list[Problem]:
    """A backend's tolerance that nothing reads: most likely a backend left out of `backends` by mistake."""
    unused = [name for name in puzzle.tolerance if name not in puzzle.backends]
    if not unused:
        return []
    return [Problem(puzzle.name, "tolerance", f"it gives a tolerance for {', '.join(unused)}, where the puzzle "
                                              f"does not run (its backends: {', '.join(puzzle.backends)})")]


def _has_input_maker(puzzle: Puzzle) -> bool:
    tree, _ = _tree(puzzle.spec_path)
    return tree is not None and "make_inputs" in _functions(tree)


def course_keys(course: Course) -> list[Problem]:
    found = []
    if not course.version:
        found.append(Problem(None, COURSE_FILE, "it gives no `version` under [course]; "
                                             "learners and graders see it in `list` and `doctor`"))
    return found


def example_problems(course: Course) -> tuple[list[Problem], list[examples.Example]]:
    """Problems with mistakes.toml and correct.toml, and the examples that can be built."""
    found: list[Problem] = []
    usable: list[examples.Example] = []
    for file in (examples.MISTAKES, examples.CORRECT):
        try:
            listed = examples.load(course.folder, file)
        except UserError as exc:
            found.append(Problem(None, file, exc.message))
            continue
        wrong = examples.problems(listed, course)
        by_name = {name for name, _ in wrong}
        found += [Problem(next((e.puzzle for e in listed if e.name == name), None), name, text)
                  for name, text in wrong]
        usable += [e for e in listed if e.name not in by_name]
    return found, usable


def _local_target_files(course: Course) -> set[str]:
    """Top-level modules of the course's own targets ("my_target.py" for "my_target:MyTarget")."""
    return {Path(chapter.target.rpartition(":")[0]).name for chapter in course.chapters if ":" in chapter.target}


def stray_files(course: Course) -> list[Problem]:
    """Files that belong to no puzzle: a stub with no puzzle, an unused spec, a stray folder."""
    expected = {
        "exercises": {p.file for p in course.puzzles},
        "solutions": {p.file for p in course.puzzles},
        "specs": {p.spec_path.name for p in course.puzzles},
    }
    allowed_top = TOP_FILES | set(expected) | _local_target_files(course)
    found = []
    # The built-in course in a clone keeps exercises/ and solutions/ at the repository's top.
    entries = [*course.folder.iterdir(), *((course.files / name) for name in ("exercises", "solutions")
                                           if course.files != course.folder)]
    for entry in sorted(entries, key=lambda path: path.name):
        name = entry.name
        if name.startswith(".") or name in IGNORED:
            continue
        if name in expected and entry.is_dir():
            for inner in sorted(entry.iterdir()):
                if inner.name not in expected[name] and inner.name not in IGNORED and not inner.name.startswith("."):
                    found.append(Problem(None, f"{name}/{inner.name}", "no puzzle uses this file; remove it "
                                                                      "or name it in the course file"))
        elif name not in allowed_top and not name.startswith(TOP_PREFIXES):
            found.append(Problem(None, name + ("/" if entry.is_dir() else ""),
                                 "a course folder holds course.toml, exercises/, solutions/, specs/ and the "
                                 "optional mistakes.toml and correct.toml; this is none of them"))
    return found


def problems(course: Course) -> tuple[list[Problem], list[examples.Example]]:
    """Every problem that needs no kernel run, and the examples that can be built."""
    found = course_keys(course)
    for puzzle in course.puzzles:
        found += puzzle_files(puzzle) + puzzle_keys(puzzle)
    wrong, usable = example_problems(course)
    return found + wrong + stray_files(course), usable
