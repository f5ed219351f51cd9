"""Command-line parsing only: every command is one call into `commands`, made inside
the one error boundary (`boundary.run_guarded`), which owns every exit code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from pallas_puzzles import backends, versions
from pallas_puzzles.backends import Mode
from pallas_puzzles.boundary import run_guarded
from pallas_puzzles.output import Output
from pallas_puzzles.report import formats

app = typer.Typer(
    name="pallas-puzzles",
    help="Learn JAX Pallas kernel programming one checked puzzle at a time.",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no `<bool>` type labels on flags
)

BackendOption = Annotated[
    str | None,
    typer.Option("--backend", "-b", metavar="NAME",
                 help="auto (the accelerator JAX sees, else interpret), interpret, gpu or tpu."),
]
PollOption = Annotated[bool, typer.Option("--poll", help="Watch files by polling (network drives, containers).")]
DEFAULT_MEMORY_MIB = 2048  # grade's memory limit per checker, JAX's own ~300 MiB included
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout (for scripts and CI); "
                                                         "the same as --format json.")]
FormatOption = Annotated[str | None, typer.Option("--format", metavar="NAME",
                                                  help=f"Output format: {', '.join(formats.FORMATS)}.")]
PuzzleArgument = Annotated[
    str | None, typer.Argument(metavar="PUZZLE", help="Puzzle number or name (default: the current puzzle).")
]
AllOption = Annotated[bool, typer.Option("--all", help="Check every puzzle.")]
# One flag, two spellings: `--solution` and `--solutions` mean the same on every command.
SolutionsOption = Annotated[bool, typer.Option("--solutions", "--solution",
                                               help="Use the reference solution(s) instead of your files.")]


def _run(action: Callable[[Output], int], as_json: bool = False, format_name: str | None = None) -> None:
    chosen = [Output.make()]  # until the asked-for format is known to exist, errors are said plainly

    def guarded() -> int:
        chosen[0] = Output.make("json" if as_json else format_name or "terminal")
        return action(chosen[0])

    raise typer.Exit(run_guarded(guarded, lambda message: chosen[0].error(message)))


def _backend(ctx: typer.Context, local: str | None) -> str:
    return backends.validate(local or (ctx.obj or {}).get("backend") or backends.AUTO)


def _show_version(wanted: bool) -> None:
    if wanted:
        print(versions.described())
        raise typer.Exit()


VersionOption = Annotated[bool, typer.Option("--version", is_eager=True, callback=_show_version,
                                             help="Show the version (and jax's and Python's) and exit.")]


@app.callback()
def main_callback(ctx: typer.Context, backend: BackendOption = None, poll: PollOption = False,
                  version: VersionOption = False) -> None:
    """Without a command, start watch mode."""
    ctx.obj = {"backend": backend}
    if ctx.invoked_subcommand is None:
        from pallas_puzzles.commands.watch import cmd_watch

        _run(lambda out: cmd_watch(out, _backend(ctx, None), poll))


@app.command()
def init(directory: Annotated[str, typer.Argument(metavar="DIR", help="Folder for the new workspace.")]
         = "pallas-puzzles-workspace",
         course: Annotated[str | None, typer.Option("--course", metavar="DIR|PACKAGE",
                                                    help="Start from this course: a course folder or an installed "
                                                         "course package (default: the built-in course).")]
         = None) -> None:
    """Write a fresh workspace: exercises, an empty solutions folder, progress file, README."""
    from pallas_puzzles.commands.init import cmd_init

    _run(lambda out: cmd_init(out, directory, course))


@app.command()
def watch(ctx: typer.Context, backend: BackendOption = None, poll: PollOption = False) -> None:
    """Check the current puzzle on every save and move on when it passes."""
    from pallas_puzzles.commands.watch import cmd_watch

    _run(lambda out: cmd_watch(out, _backend(ctx, backend), poll))


@app.command()
def verify(ctx: typer.Context, puzzle: PuzzleArgument = None, all_: AllOption = False,
           solutions: SolutionsOption = False, backend: BackendOption = None, as_json: JsonOption = False,
           format_name: FormatOption = None) -> None:
    """Check one puzzle (or --all) once: exit 0 on pass, 1 on fail, 2 on bad input."""
    from pallas_puzzles.commands.verify import cmd_verify

    _run(lambda out: cmd_verify(out, puzzle, all_, _backend(ctx, backend), solutions), as_json, format_name)


@app.command()
def lower(puzzle: PuzzleArgument = None,
          all_: Annotated[bool, typer.Option("--all", help="Check every puzzle that runs on a TPU.")] = False,
          solutions: SolutionsOption = False, as_json: JsonOption = False, format_name: FormatOption = None) -> None:
    """Without a TPU: check that a kernel lowers for one (Mosaic's block rules), on this machine."""
    from pallas_puzzles.commands.verify import cmd_verify

    _run(lambda out: cmd_verify(out, puzzle, all_, backends.TPU.name, solutions, Mode.LOWER), as_json,
         format_name)


@app.command()
def perf(ctx: typer.Context, puzzle: PuzzleArgument = None, all_: AllOption = False,
         solution: SolutionsOption = False,
         chip: Annotated[str | None, typer.Option("--chip", metavar="CHIP",
                                                  help="Chip for the estimate: a TPU generation, v4, v5e "
                                                       "(default), v5p, v6e; or for GPU puzzles an NVIDIA "
                                                       "GPU, h100 (default), h200, b200.")] = None,
         backend: BackendOption = None, as_json: JsonOption = False, format_name: FormatOption = None) -> None:
    """Check a puzzle and show its performance card: HBM traffic, VMEM, estimated TPU time, or for a GPU
    puzzle TMA traffic, tensor-core FLOPs, SMEM and estimated GPU time (on a GPU or TPU the kernel is
    also timed; --json reports it)."""
    from pallas_puzzles.commands.verify import cmd_perf

    _run(lambda out: cmd_perf(out, puzzle, _backend(ctx, backend), solution, chip, all_), as_json, format_name)


@app.command()
def doctor() -> None:
    """Report Python, JAX, devices, the backend `auto` picks, the cache, the watcher and the workspace."""
    from pallas_puzzles.commands.doctor import cmd_doctor

    _run(cmd_doctor)


@app.command()
def hint(puzzle: PuzzleArgument = None,
         level: Annotated[int | None, typer.Option("--level", metavar="K", min=1,
                                                   help="Show hints 1 to K (outside a workspace "
                                                        "nothing is remembered).")] = None) -> None:
    """Show the next hint level for a puzzle (works in any folder)."""
    from pallas_puzzles.commands.hint import cmd_hint

    _run(lambda out: cmd_hint(out, puzzle, level))


@app.command("list")
def list_puzzles(as_json: JsonOption = False, format_name: FormatOption = None) -> None:
    """Table of puzzles: number, name, status, file (works in any folder)."""
    from pallas_puzzles.commands.listing import cmd_list

    _run(cmd_list, as_json, format_name)


YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _confirm(question: str) -> bool:
    return typer.confirm(question, default=False)


@app.command()
def reset(puzzle: Annotated[str, typer.Argument(metavar="PUZZLE", help="Puzzle number or name.")],
          yes: YesOption = False) -> None:
    """Restore a puzzle's stub; your current file is backed up first."""
    from pallas_puzzles.commands.reset import cmd_reset

    _run(lambda out: cmd_reset(out, puzzle, yes, _confirm))


@app.command()
def solution(puzzle: PuzzleArgument = None, yes: YesOption = False) -> None:
    """Show the reference solution (asks first if you have not solved the puzzle; works in any folder)."""
    from pallas_puzzles.commands.solution import cmd_solution

    _run(lambda out: cmd_solution(out, puzzle, yes, _confirm))


@app.command()
def show(ctx: typer.Context, puzzle: PuzzleArgument = None, solution: SolutionsOption = False,
         case: Annotated[int | None, typer.Option("--case", metavar="K", min=1,
                                                  help="Shape case K (1-based); "
                                                       "default: the first failing one.")] = None,
         html: Annotated[Path | None, typer.Option("--html", metavar="FILE",
                                                   help="Write the view as one self-contained HTML page.")] = None,
         no_open: Annotated[bool, typer.Option("--no-open", help="With --html: do not open a browser.")] = False,
         backend: BackendOption = None) -> None:
    """Step through the grid: the block each program reads and writes, and where the output is wrong."""
    from pallas_puzzles.commands.show import cmd_show

    _run(lambda out: cmd_show(out, puzzle, _backend(ctx, backend), solution, case, html, not no_open))


@app.command()
def grade(ctx: typer.Context,
          submissions: Annotated[list[str], typer.Argument(metavar="SUBMISSION...",
                                                           help="Workspaces, or folders of exercise files.")],
          course: Annotated[str | None, typer.Option("--course", metavar="DIR|PACKAGE",
                                                     help="The course to grade against (default: the one "
                                                          "the workspaces were made from, else the built-in "
                                                          "course).")] = None,
          csv_file: Annotated[str | None, typer.Option("--csv", metavar="FILE",
                                                       help="Write the table as CSV (- for stdout; the default).")]
          = None,
          json_file: Annotated[str | None, typer.Option("--json", metavar="FILE",
                                                        help="Write the table as JSON (- for stdout).")] = None,
          time_limit: Annotated[float, typer.Option("--time-limit", metavar="SECONDS",
                                                    help="Seconds each check may take "
                                                         "(default: each puzzle's own limit).")] = 0.0,
          memory_limit: Annotated[int, typer.Option("--memory-limit", metavar="MIB",
                                                    help="Memory a checker may hold while checking, "
                                                         "JAX included (0: no limit).")]
          = DEFAULT_MEMORY_MIB,
          backend: BackendOption = None) -> None:
    """Check many learners' work against one course: one table of submission x puzzle."""
    from pallas_puzzles.commands.grade import cmd_grade

    out = Output.for_table()
    raise typer.Exit(run_guarded(lambda: cmd_grade(out, submissions, course, _backend(ctx, backend), csv_file,
                                                   json_file, time_limit, memory_limit), out.error))


dev_app = typer.Typer(name="dev", help="Write and check a course of your own.", no_args_is_help=True,
                      add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
app.add_typer(dev_app)


@dev_app.command("new")
def dev_new(directory: Annotated[Path, typer.Argument(metavar="DIR",
                                                      help="A new or empty folder for the course.")]) -> None:
    """Write a small working course (one chapter, two puzzles) to start from."""
    from pallas_puzzles.commands import dev

    _run(lambda out: dev.cmd_new(out, directory))


@dev_app.command("guide")
def dev_guide() -> None:
    """Print the course-format guide (Markdown): the files of a course, every key, the checks."""
    from pallas_puzzles.commands import dev

    _run(dev.cmd_guide)


@dev_app.command("times")
def dev_times(directory: Annotated[Path, typer.Argument(metavar="DIR", help="The course folder (default: here).")]
              = Path("."),
              write: Annotated[bool, typer.Option("--write", help="Regenerate the course's reference_times.toml.")]
              = False,
              only: Annotated[list[str] | None, typer.Option("--only", metavar="NAME",
                                                             help="Measure only this puzzle (repeatable); keep "
                                                                  "the other figures.")] = None) -> None:
    """Time a cold check of each reference solution: the figures behind the puzzles' time limits."""
    from pallas_puzzles.commands import dev

    _run(lambda out: dev.cmd_times(out, directory, write, only or []))


@dev_app.command("check")
def dev_check(directory: Annotated[Path, typer.Argument(metavar="DIR", help="The course folder (default: here).")]
              = Path("."),
              backend: Annotated[str | None, typer.Option("--backend", "-b", metavar="NAME",
                                                          help="Also run the stubs, solutions and examples on "
                                                               "this accelerator (gpu or tpu) and compare.")] = None,
              puzzles: Annotated[list[str] | None, typer.Option("--puzzle", "-p", metavar="PUZZLE",
                                                                help="Run only this puzzle's kernels (number or "
                                                                     "name; repeat for more).")] = None,
              as_json: JsonOption = False) -> None:
    """Check a course: its files, every stub fails, every solution passes (and lowers), every example."""
    from pallas_puzzles.commands import dev

    _run(lambda out: dev.cmd_check(out, directory, backend, tuple(puzzles or ())), as_json)


def main() -> None:
    app()
