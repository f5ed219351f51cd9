"""One module per command, as pre-commit has; each `cmd_*` function returns the process exit code.

`cli` parses arguments and calls these inside the one error boundary. Progress rules live in
`workspace.progress`, checking many files in `checking`, output in `report`: a command only wires them up.
"""
