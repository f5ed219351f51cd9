"""`init [DIR]`: a fresh workspace for a course."""

from __future__ import annotations

import shlex
from pathlib import Path

from pallas_puzzles import versions
from pallas_puzzles.checking import support
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report import sentences
from pallas_puzzles.workspace.folder import init_workspace
from pallas_puzzles.workspace.state import fresh_state, save_state


def cmd_init(out: Output, name: str | Path, course_name: str | None = None) -> int:
    if not str(name).strip():  # `init "$DIR"` with DIR unset would fill the current folder
        raise UserError("Give the new workspace a folder name (`.` for the current folder).")
    directory = Path(name)
    source = course_source.resolve(course_name or course_source.BUILTIN)
    course = load_course(source.folder)
    workspace = init_workspace(directory, course)
    save_state(workspace, fresh_state(course))
    course_source.record(workspace, source, course)
    tours = [p for p in course.puzzles if p.tour]
    out.info(f"Created a workspace for {course.heading} in {workspace.root}: {sentences.course_size(course)}.")
    beyond = support.beyond_this_jax(course.counted)
    if beyond:  # counted as watch counts them (its progress bar)
        reachable = len(course.counted) - sum(len(puzzles) for puzzles in beyond.values())
        out.info(f"This environment's jax runs {reachable} of them: " + "; ".join(
            sentences.puzzles_need(puzzles, versions.needed_and_found(needed)) for needed, puzzles in beyond.items())
            + ".")
    if tours:
        out.info(f"Start by reading {workspace.exercise(tours[0]).relative_to(workspace.root)}: "
                 f"a solved, runnable tour of Pallas.")
    here = workspace.root.resolve() == Path.cwd().resolve()
    out.info("Then: " + ("" if here else f"cd {shlex.quote(str(directory))} && ") + "pallas-puzzles watch")
    return EXIT_PASS
