"""`python -m pallas_puzzles.worker READ_FD WRITE_FD TARGET BACKEND MODE [SERVES]`: a checker process;
`python -m pallas_puzzles.worker zygote SOCKET_FD BACKEND MODE`: the process checkers are forked from."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["zygote"]:
        from pallas_puzzles.worker.zygote import main

        main(sys.argv[1:])
    else:
        from pallas_puzzles.worker.child import main

        main(sys.argv)
