"""Every environment variable pallas-puzzles reads, with what it means: the one registry.

Code reads a variable through its entry here (`TIME_LIMIT.value()`), never through `os.environ`
directly, so this list is complete; docs/commands.md's table of variables is generated from it
(scripts/generate_docs.py). Setting a variable for JAX before it starts is not reading one:
`backends.prepare_environment` does that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Variable:
    name: str
    meaning: str  # one sentence, for the docs' table

    def value(self) -> str:
        """The value as set; "" when unset."""
        return os.environ.get(self.name, "")

    def turned_off(self) -> bool:
        """For a switch: has it been set to "0"?"""
        return self.value().strip() == "0"


@dataclass(frozen=True)
class Family:
    """Variables read together by the start of their names."""

    prefixes: tuple[str, ...]
    meaning: str

    def items(self) -> list[tuple[str, str]]:
        """Every variable of the family that is set, as sorted (name, value) pairs."""
        return sorted((name, value) for name, value in os.environ.items() if name.startswith(self.prefixes))


COURSE = Variable(
    "PALLAS_PUZZLES_COURSE",
    "The course a workspace uses, as a folder or an installed package, instead of the one it recorded at "
    "`init` (for a course that moved, or a CI job whose course lives elsewhere).")
TIME_LIMIT = Variable(
    "PALLAS_PUZZLES_TIME_LIMIT",
    "Seconds a check may run before it is stopped, instead of each puzzle's own limit; a positive number.")
MEMORY_LIMIT = Variable(
    "PALLAS_PUZZLES_MEMORY_LIMIT",
    "MiB a checker may hold while it checks your kernel (`watch`, `verify`, `perf`, `lower`, `show`; JAX's own "
    "~300 MiB included) before it is stopped, instead of half the machine's memory up to 4096; `0` for no "
    "limit. Linux only.")
CACHE_DIR = Variable(
    "PALLAS_PUZZLES_CACHE_DIR",
    "The folder for JAX's compilation cache, with the specs' stored answers in its `spec-outputs/` "
    "(default: `pallas-puzzles/jax/` and `pallas-puzzles/spec-outputs/` in the user's cache folder).")
FAST = Variable(
    "PALLAS_PUZZLES_FAST",
    "`0` turns off the checker's fast path (warm checkers, numpy for common operations, two checkers sharing "
    "each check of the multi-chip and GPU chapters in watch, one pool of checkers for every chapter's target "
    "in `--all`, a core of its own for each checker, checkers forked from one process that has imported JAX) and "
    "the specs' stored answers, to compare verdicts or rule the speed-ups out.")
FAST_COMPILE = Variable(
    "PALLAS_PUZZLES_FAST_COMPILE",
    "`0` turns off the XLA flags that make the checker's programs cheap to compile.")
XDG_CACHE_HOME = Variable(
    "XDG_CACHE_HOME",
    "The user's cache folder (default `~/.cache`): crash logs, JAX's compilation cache and the specs' "
    "stored answers go to `pallas-puzzles/` in it.")
XLA_FLAGS = Variable(
    "XLA_FLAGS",
    "Your XLA flags: the checker adds its own (strict precision, cheap compiles) and yours win where both "
    "set one.")
JAX_PLATFORMS = Variable(
    "JAX_PLATFORMS",
    "`cpu` keeps JAX on the CPU, so `--backend auto` means `interpret`; checkers for the interpret backend "
    "and for `lower` set it to `cpu` when it is unset.")
GPU_PREALLOCATE = Variable(
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "JAX's: whether it takes most of a GPU's memory when it starts; checkers that may run on an accelerator "
    "set it to `false` when it is unset, so that several of them share one GPU.")
ALLOCATOR_ARENAS = Variable(
    "MALLOC_ARENA_MAX",
    "glibc's: how many memory arenas a process's threads share; checker processes are started with `2` when "
    "it is unset, which hands back more of what a check freed.")
BLAS_THREADS = Variable(
    "OPENBLAS_NUM_THREADS",
    "OpenBLAS's (numpy's matrix products): how many threads it runs; checker processes are started with `1` "
    "when it is unset: a check's arrays are small, and more threads made two checkers side by side slower.")
CHECK_SETTINGS = Family(
    # PALLAS_PUZZLES_FAST covers both speed-up switches: a check run to rule them out must not be
    # answered with a verdict they gave.
    ("JAX_", "XLA_", "CUDA_", "TPU_", "LIBTPU_", "PALLAS_PUZZLES_FAST"),
    "Part of the key of every stored verdict and stored spec answer: changing any of them means checking "
    "afresh.")

VARIABLES: tuple[Variable, ...] = (COURSE, TIME_LIMIT, MEMORY_LIMIT, CACHE_DIR, FAST, FAST_COMPILE, XDG_CACHE_HOME,
                                   XLA_FLAGS, JAX_PLATFORMS, GPU_PREALLOCATE, ALLOCATOR_ARENAS, BLAS_THREADS)
FAMILIES: tuple[Family, ...] = (CHECK_SETTINGS,)


def for_child(defaults: dict[str, str]) -> dict[str, str]:
    """The environment for a process this one starts: this one's, with `defaults` where a variable is unset."""
    return {**defaults, **os.environ}


def cache_home() -> Path:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache."""
    return Path(XDG_CACHE_HOME.value() or Path.home() / ".cache")
