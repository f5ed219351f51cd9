"""Which jax this environment has, and whether a puzzle's APIs exist in it.

Read from the installed package's metadata, so the CLI can answer without
importing jax. jax 0.11 dropped Python 3.11: a puzzle that needs jax 0.11 or
newer also needs Python 3.12 or newer, and the sentence says so.
"""

from __future__ import annotations

import functools
import re
import sys

# The oldest Python that pip resolves each jax minor release (and newer) on.
_PYTHON_FOR_JAX: tuple[tuple[tuple[int, int], str], ...] = (((0, 11), "3.12"), ((0, 0), "3.11"))


def parse(version: str) -> tuple[int, ...]:
    """'0.12.0.1' -> (0, 12, 0, 1); a suffix such as 'rc1' or '.dev2025' ends the number."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:
            break
    return tuple(parts)


@functools.cache
def installed(distribution: str) -> str | None:
    """The installed version of a distribution (None: not installed), read once per process."""
    from importlib import metadata  # 18 ms to import: only when a version is asked for

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def installed_jax() -> str | None:
    return installed("jax")


def ours() -> str:
    """This package's version: pyproject.toml is its one home, read back from the install."""
    return installed("pallas-puzzles") or "unknown"


def described() -> str:
    """What `--version` prints: 'pallas-puzzles 0.1.0 (jax 0.12.0.1, Python 3.12.1)'."""
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"pallas-puzzles {ours()} (jax {installed_jax() or 'not installed'}, Python {python})"


def python_for(min_jax: str) -> str:
    wanted = parse(min_jax)[:2]
    return next(python for release, python in _PYTHON_FOR_JAX if wanted >= release)


def too_old(min_jax: str, have: str | None = None) -> bool:
    """Whether this environment's jax (or `have`) is older than `min_jax` ("": any jax will do)."""
    if not min_jax:
        return False
    have = have if have is not None else installed_jax()
    return have is None or parse(have) < parse(min_jax)


def needed_and_found(min_jax: str, have: str | None = None, on: str = "") -> str:
    """'jax 0.12 or newer (on Python 3.12 or newer); this environment has jax 0.10.2 on Python 3.11';
    `on` says where ("on the interpret backend")."""
    have = have if have is not None else installed_jax()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    found = f"jax {have}" if have else "no jax"
    where = f" {on}" if on else ""
    return f"jax {min_jax} or newer{where} (on Python {python_for(min_jax)} or newer); this environment has " \
           f"{found} on Python {python}"


def missing_requirement(number: int, min_jax: str, have: str | None = None, on: str = "",
                        after: str = "") -> str | None:
    """One sentence when this environment's jax is older than `min_jax`, else None; `on` says where
    ("on the interpret backend"), `after` is a clause that ends the sentence."""
    if not too_old(min_jax, have):
        return None
    return f"Puzzle {number} needs {needed_and_found(min_jax, have, on)}{after}."
