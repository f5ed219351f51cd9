"""Reading a course folder: its course file (chapters, puzzles, format version) and reference times.

A course is a folder holding `course.toml`, `exercises/`, `solutions/`, `specs/` and a generated
`reference_times.toml`. The built-in course is such a folder too inside the installed package
(`builtin/`); in a clone its exercises and solutions are the repository's top-level folders.
A course file that cannot be used is refused in one sentence naming the file and what is wrong.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from pallas_puzzles import backends
from pallas_puzzles.course.model import Budget, Chapter, Course, InputSpec, Puzzle, Reshape, Tolerance
from pallas_puzzles.errors import UserError

FORMAT = 2  # the version of the course file format this release reads
COURSE_FILE = "course.toml"
TIMES_FILE = "reference_times.toml"
DEFAULT_TARGET = "tpu-interpret"

_CHAPTER_OWN = {"name", "title", "intro", "target", "puzzle"}  # the rest of a chapter: defaults for its puzzles
_DERIVED = {"number", "chapter", "folder", "files", "reference_seconds"}  # set by the loader, never written


class CourseError(UserError):
    """The course file (or folder) is not one this release can use."""


def builtin_folder() -> Path:
    """The built-in course's definition: `builtin/` beside this module, in a wheel and in a clone alike."""
    folder = Path(__file__).resolve().parent / "builtin"
    if (folder / COURSE_FILE).is_file():
        return folder
    raise CourseError("The installed pallas-puzzles has no course folder; reinstall it with "
                      "`pip install --force-reinstall pallas-puzzles`.")


def files_folder(folder: Path) -> Path:
    """Where a course's `exercises/` and `solutions/` lie: in its own folder, as the wheel packs the built-in
    course; for the built-in course in a clone (an editable install), at the repository's top."""
    if (folder / "exercises").is_dir() or folder != builtin_folder():
        return folder
    top = folder.parents[3]  # src/pallas_puzzles/course/builtin -> the repository
    return top if (top / "exercises").is_dir() else folder


@functools.cache
def _load(folder: Path) -> Course:
    path = folder / COURSE_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CourseError(f"{path} cannot be read ({exc.strerror or exc}); "
                          f"a course folder needs a {COURSE_FILE}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path} is not valid TOML ({exc}).") from None
    return parse(data, folder, _reference_times(folder))


def load_course(folder: Path | None = None) -> Course:
    """The course in `folder` (the built-in course by default), read once per process."""
    return _load((folder or builtin_folder()).resolve())


def _reference_times(folder: Path) -> dict[str, float]:
    try:
        data = tomllib.loads((folder / TIMES_FILE).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # not measured yet: every limit is the floor
    return {str(name): float(seconds) for name, seconds in data.get("seconds", {}).items()}


def parse(data: dict[str, Any], folder: Path, times: dict[str, float] | None = None) -> Course:
    """A course from the parsed TOML of its course file."""
    where = folder / COURSE_FILE
    if data.get("format") != FORMAT:
        raise CourseError(f"{where} is in course format {data.get('format', 'none given')}; this pallas-puzzles "
                          f"reads format {FORMAT} (set `format = {FORMAT}`; docs/course-format.md describes it).")
    raw_chapters = data.get("chapter") or []
    if not raw_chapters:
        raise CourseError(f"{where} has no [[chapter]]; every puzzle belongs to one.")
    chapters, puzzles = [], []
    for index, raw in enumerate(raw_chapters, start=1):
        chapter = Chapter(name=_text(raw, "name", where), title=_text(raw, "title", where),
                          intro=str(raw.get("intro", "")), number=index,
                          target=_target_name(str(raw.get("target", DEFAULT_TARGET)), folder))
        chapters.append(chapter)
        defaults = {k: v for k, v in raw.items() if k not in _CHAPTER_OWN}
        for entry in raw.get("puzzle") or []:
            puzzles.append({**defaults, **entry, "chapter": chapter.name,
                            "target": entry.get("target", chapter.target)})
    if not puzzles:
        raise CourseError(f"{where} has chapters but no [[chapter.puzzle]].")
    first = 0 if puzzles[0].get("tour") else 1
    files = files_folder(folder)
    parsed = tuple(_puzzle(raw, first + i, folder, files, (times or {}).get(str(raw.get("name")), 0.0), where)
                   for i, raw in enumerate(puzzles))
    if all(p.tour for p in parsed):
        raise CourseError(f"{where} has no puzzle besides its tour; a course needs one to solve.")
    _unique(where, "chapter", [c.name for c in chapters])
    _unique(where, "puzzle", [p.name for p in parsed])
    _unique(where, "file", [p.file for p in parsed])
    course = data.get("course", {})
    return Course(name=str(course.get("name", folder.name)), title=str(course.get("title", "Pallas Puzzles")),
                  folder=folder, files=files, chapters=tuple(chapters), puzzles=parsed,
                  version=str(course.get("version", "")))


def _target_name(declared: str, folder: Path) -> str:
    """A course's own target written "module:Class", with module.py beside the course file, is named by
    that file's path: checker processes then load it without the course folder on their import path."""
    module, _, attribute = declared.rpartition(":")
    local = folder / f"{module}.py"
    return f"{local}:{attribute}" if module.isidentifier() and attribute and local.is_file() else declared


def _text(raw: dict[str, Any], key: str, where: Path) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise CourseError(f"{where}: a chapter or puzzle is missing its `{key}` ({raw.get('name', 'unnamed')}).")
    return value


def _unique(where: Path, what: str, names: list[str]) -> None:
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CourseError(f"{where}: the {what} name(s) {', '.join(twice)} are used more than once.")


_KNOWN = {f.name for f in fields(Puzzle)} - _DERIVED


def _puzzle(raw: dict[str, Any], number: int, folder: Path, files: Path, seconds: float, where: Path) -> Puzzle:
    name = _text(raw, "name", where)
    unknown = set(raw) - _KNOWN - {"chapter"}
    if unknown:  # a misspelt key would otherwise be ignored without a word
        raise CourseError(f"{where}: puzzle {name} has unknown keys {sorted(unknown)}.")
    for key in ("title", "file", "entry"):
        _text(raw, key, where)
    if "cases" not in raw or backends.INTERPRET.cases not in raw["cases"]:
        raise CourseError(f"{where}: puzzle {name} has no `interpret` shape cases.")
    cases = {backend: tuple(dict(c) for c in raw_cases) for backend, raw_cases in raw["cases"].items()}
    named = set(raw.get("backends", ())) | set(cases)
    if not named <= set(backends.REGISTRY):
        raise CourseError(f"{where}: puzzle {name} names unknown backends {sorted(named - set(backends.REGISTRY))}.")
    interpreted = Tolerance(rtol=float(raw.get("rtol", 1e-5)), atol=float(raw.get("atol", 1e-5)))
    return Puzzle(
        name=name, number=number, chapter=raw["chapter"], folder=folder, files=files,
        title=raw["title"], file=raw["file"], entry=raw["entry"],
        summary=str(raw.get("summary", "")),
        hints=tuple(raw.get("hints", ())),
        inputs=tuple(InputSpec(name=item["name"], shape=tuple(item["shape"]), dtype=item.get("dtype", "float32"),
                               low=float(item.get("low", -0.5)), high=float(item.get("high", 0.5)))
                     for item in raw.get("inputs", [])),
        cases=cases,
        backends=tuple(raw.get("backends", backends.REGISTRY)),
        target=str(raw["target"]),
        rtol=interpreted.rtol,
        atol=interpreted.atol,
        tolerance=_tolerances(raw, interpreted, name, where),
        tour=bool(raw.get("tour", False)),
        sequential_grid=bool(raw.get("sequential_grid", False)),
        tpu_only_idiom=str(raw.get("tpu_only_idiom", "")),
        time_limit=float(raw.get("time_limit", 0.0)),
        reference_seconds=seconds,
        spec=str(raw.get("spec", name)),
        min_jax=str(raw.get("min_jax", "")),
        cores=int(raw.get("cores", 1)),
        detect_races=bool(raw.get("detect_races", False)),
        budget=Budget(**raw["budget"]) if "budget" in raw else None,
        distributions=_distributions(raw, name, where),
        target_options=dict(raw.get("target_options", {})),
        launcher_ops=_names(raw, "launcher_ops", name, where),
    )


def _names(raw: dict[str, Any], key: str, name: str, where: Path) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CourseError(f"{where}: puzzle {name}'s `{key}` must be a list of names (strings).")
    return tuple(value)


def _tolerances(raw: dict[str, Any], interpreted: Tolerance, name: str, where: Path) -> dict[str, Tolerance]:
    """`tolerance = { gpu = { rtol = ..., atol = ... } }`: a backend's own rtol and atol (one left out is the
    puzzle's). The interpreter has none: its tolerance is the puzzle's rtol and atol."""
    value = raw.get("tolerance", {})
    own = [b for b in backends.REGISTRY if b != backends.INTERPRET.name]
    example = "e.g. `tolerance = { gpu = { rtol = 1e-3, atol = 1e-3 } }`"
    if not isinstance(value, dict):
        raise CourseError(f"{where}: puzzle {name}'s `tolerance` must be a table of backends, {example}.")
    out = {}
    for backend, entry in value.items():
        if backend not in own:
            raise CourseError(f"{where}: puzzle {name}'s `tolerance` names '{backend}', which has no tolerance of "
                              f"its own (only {', '.join(own)} do; the interpreter's is the puzzle's rtol and atol).")
        if not _bounds(entry):
            raise CourseError(f"{where}: puzzle {name}'s `tolerance` for {backend} must give rtol, atol or both, "
                              f"as numbers of at least 0, {example}.")
        out[backend] = Tolerance(rtol=float(entry.get("rtol", interpreted.rtol)),
                                 atol=float(entry.get("atol", interpreted.atol)))
    return out


def _bounds(entry: Any) -> bool:
    """A table of rtol, atol or both, each a number of at least 0."""
    return (isinstance(entry, dict) and bool(entry) and set(entry) <= {"rtol", "atol"}
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in entry.values()))


def _distributions(raw: dict[str, Any], name: str, where: Path) -> tuple[tuple[Reshape, ...], ...]:
    inputs = {item["name"] for item in raw.get("inputs", [])}
    out = []
    for case in raw.get("distributions", []):
        if not set(case) <= inputs:
            raise CourseError(f"{where}: puzzle {name} reshapes unknown inputs {sorted(set(case) - inputs)}.")
        out.append(tuple(Reshape(input=key, shift=float(how.get("shift", 0.0)), scale=float(how.get("scale", 1.0)))
                         for key, how in case.items()))
    return tuple(out)
