"""The result cache: a file the checker has already judged is not judged again.

A verdict is stored under a key made of everything that can change it: the
learner file's path and bytes, the puzzle's name, the course and checker code (every
file of this package, the course file and specs, and the puzzle's pristine stub), the Python, jax and
jaxlib versions, the backend, the mode and options, and the JAX/XLA settings
in the environment. Any change gives a new key, so a stored verdict is never
stale; it is only ever unused. Verdicts that depend on the moment rather than
the file (a time-out, a crash, a fault of ours) are never stored.

It lives in the workspace (`.pallas_puzzles/results/`) and is safe to delete.
Nothing here imports jax: a re-run of unchanged files never starts a checker.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
from pathlib import Path

from pallas_puzzles import backends, environment, versions
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult
from pallas_puzzles.workspace.folder import Workspace

MAX_ENTRIES = 400  # the oldest are pruned past this: a few full courses' worth
CODE_SUFFIXES = (".py", ".toml", ".json")

# Findings about the moment rather than the file (a check stopped at a limit, a checker that crashed,
# a fault of ours): such a verdict is never stored, and never counts as a mutant caught.
MOMENTARY = frozenset({FindingKind.TIMEOUT, FindingKind.MEMORY, FindingKind.CRASH, FindingKind.INTERNAL})


def about_the_file(result: CheckResult) -> bool:
    """The verdict is about the file itself; the same file checked again would get it again."""
    kinds = {f.kind for f in result.findings} | {f.kind for c in result.cases for f in c.findings}
    return not kinds & MOMENTARY


def runtime_identity() -> list[str]:
    """What an answer kept on disk depends on besides the code and its inputs: the Python, jax, jaxlib
    and numpy that computed it, and the JAX/XLA settings (and speed-up switches) in the environment."""
    settings = environment.CHECK_SETTINGS.items()
    return [sys.version, *(_version(name) for name in ("jax", "jaxlib", "numpy")), repr(settings)]


def store_atomically(path: Path, data: bytes, keep: int) -> None:
    """Write a cache entry whole or not at all (a reader never sees half a file), then keep only the
    `keep` newest entries of its folder (those not starting with "."). A cache that cannot be written
    only makes the next run slower."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(data)
        os.replace(partial, path)
        entries = [p for p in path.parent.iterdir() if not p.name.startswith(".")]
        if len(entries) > keep:
            entries.sort(key=lambda p: p.stat().st_mtime)
            for old in entries[: len(entries) - keep]:
                old.unlink(missing_ok=True)


@functools.cache
def code_fingerprint(course_folder: Path) -> str:
    """A digest of the checker (every source and data file of this package) and of the course's
    own definition (its course file and specs; each stub is keyed per puzzle)."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    for folder, names in ((package, _files_under(package, CODE_SUFFIXES)),
                          (course_folder, _files_in(course_folder, (".toml",))),
                          (course_folder / "specs", _files_in(course_folder / "specs", CODE_SUFFIXES))):
        for name in names:
            digest.update(name.encode())
            with open(os.path.join(folder, name), "rb") as file:
                digest.update(file.read())
    return digest.hexdigest()


# os.walk and os.listdir, not Path.glob: every checker and every command that reads a stored verdict
# computes this once, and pathlib's objects made it 17 ms instead of 6.
def _files_under(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The files with these suffixes in `folder` and below (no bytecode folder), as sorted relative paths."""
    found = []
    for root, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name != "__pycache__"]
        relative = os.path.relpath(root, folder)
        found += [os.path.normpath(os.path.join(relative, name)) for name in names
                  if name.endswith(suffixes) and os.path.isfile(os.path.join(root, name))]
    return sorted(found)


def _files_in(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The files with these suffixes directly in `folder`, sorted; none where it cannot be read."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(name for name in names if name.endswith(suffixes) and os.path.isfile(os.path.join(folder, name)))


def _version(distribution: str) -> str:
    return versions.installed(distribution) or "-"


def backend_identity(requested: str, mode: Mode) -> str | None:
    """The backend a check will run on, decided without importing jax; None when only jax can tell."""
    if mode is Mode.LOWER:
        return "tpu-lowering"
    if backends.cpu_only(requested, mode):
        return backends.INTERPRET.name
    if requested == backends.AUTO:
        return None
    return f"{requested} with {','.join(backends.accelerator_plugins()) or 'no plugin'}"


def known_backend(requested: str, mode: Mode) -> Backend | None:
    """The backend checks will run on, when it is known without starting a checker (and JAX)."""
    identity = backend_identity(requested, mode)
    if identity is None:
        return None
    return backends.TPU if mode is Mode.LOWER else backends.get(identity.split()[0])


def _stub_bytes(puzzle: Puzzle) -> bytes:
    try:
        return puzzle.stub_path.read_bytes()
    except OSError:
        return b""


class ResultCache:
    """Stored verdicts for one backend, mode and set of options, in one workspace."""

    def __init__(self, workspace: Workspace, requested: str, mode: Mode = Mode.RUN, fail_fast: bool = True) -> None:
        self.folder = workspace.results
        self.backend = backend_identity(requested, mode)
        self.mode = mode
        self.fail_fast = fail_fast

    @functools.cached_property
    def _context_digest(self) -> str:
        """What every key of this cache shares: code, versions, backend, mode, options, environment."""
        parts = [*runtime_identity(), str(self.backend), self.mode.value, str(self.fail_fast)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def key(self, puzzle: Puzzle, file: Path) -> str | None:
        """The key of this file's verdict; None when it cannot be stored (unknown backend, unreadable file)."""
        if self.backend is None:
            return None
        try:
            content = file.read_bytes()
        except OSError:
            return None
        parts = [self._context_digest, code_fingerprint(puzzle.folder), str(file.resolve()), puzzle.name,
                 puzzle.target]
        digest = hashlib.sha256("\0".join(parts).encode())
        digest.update(b"\0stub\0" + _stub_bytes(puzzle))
        digest.update(b"\0file\0" + content)
        return digest.hexdigest()

    def get(self, key: str | None, puzzle: Puzzle) -> CheckResult | None:
        """The verdict stored under `key` (from key() before the check), if any."""
        if key is None:
            return None
        try:
            # Our own pickles, written below by this package version (the key holds its code).
            result = pickle.loads((self.folder / key).read_bytes())
        except Exception:  # missing, half-written or unreadable: a miss, never an error
            return None
        return result if isinstance(result, CheckResult) and result.name == puzzle.name else None

    def put(self, key: str | None, puzzle: Puzzle, file: Path, result: CheckResult) -> None:
        """Store a verdict under the key taken before the check, if the file still has that key.

        A file saved while it was being checked gets a new key: the verdict, which
        may be about either version, is then not stored. A cache that cannot be
        written only makes the next run slower.
        """
        if key is None or not about_the_file(result) or self.key(puzzle, file) != key:
            return
        store_atomically(self.folder / key, pickle.dumps(result), MAX_ENTRIES)


def stored_passes(workspace: Workspace) -> set[str]:
    """The puzzles whose learner file (in `workspace`) a stored verdict says passed, at any time: what
    rebuilds a lost progress file. Runs of the reference solutions (`--solutions`) and `lower` do not count."""
    passed = set()
    entries = workspace.results.iterdir() if workspace.results.is_dir() else iter(())
    for entry in entries:
        try:
            result = pickle.loads(entry.read_bytes())  # our own pickles, written by `put` in this workspace
        except Exception:  # an older package's, half-written or unreadable: it proves nothing
            continue
        if (isinstance(result, CheckResult) and result.passed and result.mode == Mode.RUN.value
                and Path(result.file).parent == workspace.exercises.resolve()):
            passed.add(result.name)
    return passed

