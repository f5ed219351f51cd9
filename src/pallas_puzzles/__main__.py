"""`python -m pallas_puzzles` runs the same app as the `pallas-puzzles` command."""

from pallas_puzzles.cli import main

if __name__ == "__main__":
    main()
