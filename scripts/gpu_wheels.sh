#!/usr/bin/env bash
# The wheel folder the GPU check carries to a machine without an index (docs/backends.md):
# watchdog (the one dependency a GPU machine's JAX install usually lacks) and the build backend
# that installs the project from the checkout (hatchling and what it needs), for CPython 3.12 on
# x86-64 Linux. Run it where PyPI is reachable:
#   scripts/gpu_wheels.sh [DIR]          (default .whl, which git ignores; about 0.5 MiB)
# Another Python version: PYTHON_VERSION=3.13 scripts/gpu_wheels.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/.whl}"
python="${PYTHON:-python3}"
mkdir -p "$dir"
"$python" -m pip download --quiet --only-binary=:all: --python-version "${PYTHON_VERSION:-3.12}" \
    --implementation cp --platform manylinux2014_x86_64 --dest "$dir" "watchdog>=4.0" "hatchling>=1.18"
du -sh "$dir"
ls "$dir"
