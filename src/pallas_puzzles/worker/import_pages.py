"""Letting go of the native code the zygote ran only to import JAX (Linux).

Loading jaxlib runs the static initialisers spread all over its libraries, so the import touches tens of
MiB of their code and read-only data that nothing runs again: the checkers the zygote forks afterwards
never need most of it (a child faults a file's pages in afresh where it uses them; Linux copies no page
table of a mapping that holds only the file's pages). Still mapped, those pages count in full towards
the zygote's memory (PSS), 55-70 MiB of its 120; unmapped, they are the kernel's file cache, which the
checkers that do use a page keep mapped and which the kernel may reclaim otherwise.

`let_go()` unmaps (MADV_DONTNEED) every private read-only file mapping of this process that holds no page
of its own, neither resident nor swapped: each of its pages is the file's content, and a later read
faults it back from the file unchanged. A mapping that does hold a page of its own (data relocated at
load time, then made read-only) is left alone: dropping that page would bring back the file's bytes.
"""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

SMAPS = "/proc/self/smaps"


@dataclass
class Mapping:
    start: int
    end: int
    perms: str  # e.g. "r-xp": read, no write, execute, private
    path: str  # "" for anonymous memory, "[heap]" and the like for the kernel's own
    own_kib: int = 0  # pages that are this process's own copy: "Anonymous" resident, plus "Swap"

    @property
    def only_the_files_pages(self) -> bool:
        """Every page is the file's content, and can be read from it again."""
        private, writable = self.perms[3] == "p", self.perms[1] == "w"
        return private and not writable and self.path.startswith("/") and self.own_kib == 0


def mappings(lines: Iterable[str]) -> Iterator[Mapping]:
    """The mappings listed in an smaps file."""
    current: Mapping | None = None
    for line in lines:
        fields = line.split(maxsplit=5)
        if not fields:
            continue
        if fields[0].endswith(":"):  # a figure of the mapping above
            if current is not None and fields[0] in ("Anonymous:", "Swap:"):
                current.own_kib += int(fields[1])
            continue
        if current is not None:
            yield current
        start, _, end = fields[0].partition("-")
        current = Mapping(int(start, 16), int(end, 16), fields[1], fields[5].strip() if len(fields) > 5 else "")
    if current is not None:
        yield current


def let_go() -> int:
    """Unmap the pages that are only a file's content; the bytes let go of (0 where this cannot be done)."""
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None:  # not a system with madvise
        return 0
    try:
        with open(SMAPS) as smaps:
            droppable = [m for m in mappings(smaps) if m.only_the_files_pages]
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, ValueError):  # no /proc (not Linux), or an smaps this parser does not know
        return 0
    madvise = libc.madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return sum(m.end - m.start for m in droppable if madvise(m.start, m.end - m.start, advice) == 0)
