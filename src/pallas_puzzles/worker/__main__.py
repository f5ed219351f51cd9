"""`python -m pallas_puzzles.worker READ_FD WRITE_FD TARGET BACKEND MODE`: the checker process."""

import sys

from pallas_puzzles.worker.child import main

if __name__ == "__main__":
    main(sys.argv)
