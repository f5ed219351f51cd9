"""Which course a workspace uses: named on the command line, recorded at `init`, found again later.

`init --course SOURCE` takes a course folder (one holding course.toml) or the name of an
installed package that points at one. A package points at its course in one of two ways
(docs/course-format.md): an entry point in the group `pallas_puzzles.courses` whose value is a
package name, or being itself a package whose folder holds course.toml or a course/ folder.
Packages are located with importlib's finders, not imported.

The workspace records its course in `.pallas_puzzles/course.json`; every command reads the
course from there (`course_of`). A workspace made before courses could be chosen uses the
built-in course, and PALLAS_PUZZLES_COURSE overrides the record (a CI job whose course lives
elsewhere than on the author's machine).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pallas_puzzles import environment
from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import COURSE_FILE, CourseError, builtin_folder, load_course
from pallas_puzzles.errors import UserError
from pallas_puzzles.workspace.folder import Workspace

ENTRY_POINT_GROUP = "pallas_puzzles.courses"
RECORD = "course.json"
OVERRIDE = environment.COURSE.name
BUILTIN = "builtin"
BUILTIN_NAMES = (BUILTIN, "pallas-puzzles", "pallas_puzzles")


@dataclass(frozen=True)
class CourseSource:
    kind: str  # "builtin", "folder" or "package"
    name: str  # as given: "builtin", the package (or entry point) name, or the folder
    folder: Path  # the course folder it leads to, resolved


def _course_folder_in(folder: Path) -> Path | None:
    for candidate in (folder, folder / "course"):
        if (candidate / COURSE_FILE).is_file():
            return candidate.resolve()
    return None


def _package_folders(module: str) -> list[Path]:
    """The folders of an importable package, without importing it (a dotted name imports its parents)."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if found is None or not found.submodule_search_locations:
        return []
    return [Path(location) for location in found.submodule_search_locations]


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def package_course(name: str) -> Path | None:
    """The course folder an installed package points at, by entry point or by holding one."""
    from importlib import metadata  # 15 ms: not on the way to a checker's early start

    modules = [ep.value.partition(":")[0] for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
               if _normal(ep.name) == _normal(name)]
    if not modules and name.replace("-", "_").replace(".", "_").isidentifier():
        modules = [name.replace("-", "_")]
    for module in modules:
        for folder in _package_folders(module.strip()):
            course = _course_folder_in(folder)
            if course is not None:
                return course
    return None


def resolve(text: str, base: Path | None = None) -> CourseSource:
    """A course named on the command line: the built-in one, a folder, or an installed package."""
    given = text.strip()
    if given in BUILTIN_NAMES:
        return CourseSource(BUILTIN, BUILTIN, builtin_folder())
    path = (base or Path.cwd()) / Path(given).expanduser()
    if path.is_file() and path.name == COURSE_FILE:  # the course file itself: its folder is meant
        path = path.parent
    if path.is_dir():
        course = _course_folder_in(path)
        if course is None:
            raise CourseError(f"{path} holds no {COURSE_FILE}; a course folder has one at its top "
                              f"(`pallas-puzzles dev new DIR` writes a small working course to start from).")
        return CourseSource("folder", given, course)
    course = package_course(given)
    if course is None:
        raise UserError(f"There is no course folder '{given}' here and no installed course package of that "
                        f"name; give a folder holding {COURSE_FILE}, or install the course's package first.")
    return CourseSource("package", given, course)


def record(workspace: Workspace, source: CourseSource, course: Course) -> None:
    """Remember in the workspace where its course came from (a folder also relative to the workspace,
    so a repository holding both still finds it after a clone to another place)."""
    relative = None
    if source.kind == "folder":
        with contextlib.suppress(ValueError):  # no relative path between two drives
            relative = os.path.relpath(source.folder, workspace.root)
    data = {"kind": source.kind, "name": source.name, "folder": str(source.folder), "relative": relative,
            "course": course.name, "version": course.version}
    (workspace.meta / RECORD).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def recorded(workspace: Workspace) -> dict[str, str] | None:
    """The workspace's record of its course; None when it has none (made before courses were chosen)."""
    path = workspace.meta / RECORD
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("kind") not in (BUILTIN, "folder", "package"):
            raise ValueError("not a course record")
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is unreadable ({type(exc).__name__}); it names this workspace's course. "
                        f"Restore it, or set {OVERRIDE} to the course's folder or package.") from None
    return data


def _recorded_folder(workspace: Workspace, data: dict[str, str]) -> Path:
    if data["kind"] == BUILTIN:
        return builtin_folder()
    if data["kind"] == "package":
        found = package_course(data["name"])
        if found is None:
            raise UserError(f"This workspace uses the course package '{data['name']}', which is not installed "
                            f"here; install it, or set {OVERRIDE} to the course's folder.")
        return found
    candidates = [workspace.root / data["relative"]] if data.get("relative") else []
    for candidate in [*candidates, Path(data["folder"])]:
        if (candidate / COURSE_FILE).is_file():
            return candidate.resolve()
    raise UserError(f"This workspace uses the course in {data['folder']}, which is gone; put it back, or set "
                    f"{OVERRIDE} to the folder it moved to.")


def course_of(workspace: Workspace) -> Course:
    """The course a workspace was made from (see the module's docstring for the order of the rules)."""
    data = recorded(workspace)
    override = environment.COURSE.value().strip()
    if override:
        course = load_course(resolve(override, workspace.root).folder)
    elif data is None:
        return load_course()
    else:
        course = load_course(_recorded_folder(workspace, data))
    if data is not None and data.get("course") and course.name != data["course"]:
        raise UserError(f"This workspace belongs to the course '{data['course']}', but {course.folder} holds "
                        f"the course '{course.name}'; point {OVERRIDE} at the right one.")
    return course
