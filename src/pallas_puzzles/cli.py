"""Command-line parsing only: every command is a thin call into `commands`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from pallas_puzzles import backends, commands, render
from pallas_puzzles.errors import UserError

app = typer.Typer(
    name="pallas-puzzles",
    help="Learn JAX Pallas kernel programming one checked puzzle at a time.",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)

BackendOption = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="auto (the accelerator JAX sees, else interpret), interpret, gpu or tpu."),
]
PuzzleArgument = Annotated[str | None, typer.Argument(help="Puzzle number or name (default: the current puzzle).")]


def _run(action: Callable[[], int]) -> None:
    """Run a command; bad input becomes one sentence and exit code 2."""
    console = render.make_console()
    try:
        code = action()
    except UserError as exc:
        render.error(console, exc.message)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code)


def _backend(ctx: typer.Context, local: str | None) -> str:
    chosen = local or (ctx.obj or {}).get("backend") or "auto"
    return backends.validate(chosen)


@app.callback()
def main_callback(
    ctx: typer.Context,
    backend: BackendOption = None,
    poll: Annotated[bool, typer.Option("--poll", help="Watch files by polling (network drives, containers).")] = False,
) -> None:
    """Without a command, start watch mode."""
    ctx.obj = {"backend": backend}
    if ctx.invoked_subcommand is None:
        console = render.make_console()
        _run(lambda: commands.cmd_watch(console, _backend(ctx, None), poll))


@app.command()
def init(directory: Annotated[Path, typer.Argument(help="Folder for the new workspace.")] = Path("pallas-puzzles-workspace")) -> None:
    """Write a fresh workspace: exercises, an empty solutions folder, progress file, README."""
    console = render.make_console()
    _run(lambda: commands.cmd_init(console, directory))


@app.command()
def watch(
    ctx: typer.Context,
    backend: BackendOption = None,
    poll: Annotated[bool, typer.Option("--poll", help="Watch files by polling (network drives, containers).")] = False,
) -> None:
    """Check the current puzzle on every save and move on when it passes."""
    console = render.make_console()
    _run(lambda: commands.cmd_watch(console, _backend(ctx, backend), poll))


@app.command()
def verify(
    ctx: typer.Context,
    puzzle: PuzzleArgument = None,
    all_: Annotated[bool, typer.Option("--all", help="Check every puzzle.")] = False,
    solutions: Annotated[bool, typer.Option("--solutions", help="Check the reference solutions instead of your files.")] = False,
    backend: BackendOption = None,
) -> None:
    """Check one puzzle (or --all) once: exit 0 on pass, 1 on fail, 2 on bad input."""
    console = render.make_console()
    _run(lambda: commands.cmd_verify(console, puzzle, all_, _backend(ctx, backend), solutions))


@app.command()
def lower(
    puzzle: PuzzleArgument = None,
    all_: Annotated[bool, typer.Option("--all", help="Check every puzzle that runs on a TPU.")] = False,
    solutions: Annotated[bool, typer.Option("--solutions", help="Check the reference solutions instead of your files.")] = False,
) -> None:
    """Without a TPU: check that a kernel lowers for one (Mosaic's block rules), on this machine."""
    console = render.make_console()
    _run(lambda: commands.cmd_lower(console, puzzle, all_, solutions))


@app.command()
def doctor() -> None:
    """Report Python, JAX, devices, the backend `auto` picks, the cache, the watcher and the workspace."""
    console = render.make_console()
    _run(lambda: commands.cmd_doctor(console))


@app.command()
def hint(puzzle: PuzzleArgument = None) -> None:
    """Show the next hint level for a puzzle."""
    console = render.make_console()
    _run(lambda: commands.cmd_hint(console, puzzle))


@app.command("list")
def list_puzzles() -> None:
    """Table of puzzles: number, name, status, file."""
    console = render.make_console()
    _run(lambda: commands.cmd_list(console))


@app.command()
def reset(
    puzzle: Annotated[str, typer.Argument(help="Puzzle number or name.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Restore a puzzle's stub; your current file is backed up first."""
    console = render.make_console()
    _run(lambda: commands.cmd_reset(console, puzzle, yes, lambda q: typer.confirm(q, default=False)))


@app.command()
def solution(
    puzzle: PuzzleArgument = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Show it even if the puzzle is unsolved.")] = False,
) -> None:
    """Show the reference solution (asks first if you have not solved the puzzle)."""
    console = render.make_console()
    _run(lambda: commands.cmd_solution(console, puzzle, yes, lambda q: typer.confirm(q, default=False)))


def main() -> None:
    app()
