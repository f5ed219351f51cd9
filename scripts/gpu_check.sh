#!/usr/bin/env bash
# The prepared GPU check (docs/backends.md): the course on an NVIDIA GPU beside JAX's interpreters.
#   scripts/gpu_check.sh [--dry-run] [--puzzles A,B] [--interpreter DIR] [--wheels DIR] [--budget S] OUT
# Runs with $PYTHON (default python3), the Python whose JAX is to be checked; the work is
# scripts/gpu_check.py's. A hard stop a minute past the budget backs up the script's own limits,
# so that it can never hang.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: no Python at '$python'; set PYTHON to the Python whose JAX is to be checked." >&2
    exit 2
fi
budget=480
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    [ "${args[$i]}" = "--budget" ] && [ $((i + 1)) -lt ${#args[@]} ] && budget="${args[$((i + 1))]}"
done
stop_after=$(( ${budget%.*} + 60 ))
exec timeout --kill-after=10 "$stop_after" "$python" "$here/gpu_check.py" "$@"
