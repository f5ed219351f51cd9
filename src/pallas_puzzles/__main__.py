"""The `pallas-puzzles` command (and `python -m pallas_puzzles`).

A command that will check something starts its checker process before the CLI
imports typer and rich, so JAX's import overlaps theirs and the parsing.
"""

import sys

from pallas_puzzles.worker.launch import start_early


def main() -> None:
    start_early(sys.argv[1:])
    from pallas_puzzles.cli import main as cli_main  # imported after the checker has been started

    cli_main()


if __name__ == "__main__":
    main()
