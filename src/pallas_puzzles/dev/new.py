"""`dev new DIR`: a small working course to start from (one chapter, two puzzles, one example of each kind).

The course is a copy of `template/` beside this module, named after its folder. It passes
`dev check` as written, so an author starts from something that works and changes one thing
at a time.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from string import Template

from pallas_puzzles.errors import UserError

TEMPLATE = Path(__file__).resolve().parent / "template"
NAMED = ("course.toml", "README.md")  # the files that carry the course's name and title


def names_for(folder: Path) -> tuple[str, str]:
    """("my-course", "My course") from a folder named "My_Course" (a TOML-safe id and title)."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", folder.name) if w] or ["my", "course"]
    return "-".join(w.lower() for w in words), " ".join(w.lower() for w in words).capitalize()


def new_course(target: Path) -> Path:
    """Write the starter course into `target` (new or empty); never overwrite anything."""
    target = target.resolve()
    if target.exists() and not target.is_dir():
        raise UserError(f"{target} is a file; give a new folder for the course (nothing was changed).")
    if target.exists() and any(target.iterdir()):
        raise UserError(f"{target} is not empty; give a new or empty folder for the course (nothing was changed).")
    shutil.copytree(TEMPLATE, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    name, title = names_for(target)
    for file in NAMED:
        path = target / file
        path.write_text(Template(path.read_text(encoding="utf-8")).substitute(name=name, title=title),
                        encoding="utf-8")
    return target
