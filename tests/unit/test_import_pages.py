"""Which pages the zygote lets go of after its import (worker/import_pages.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pallas_puzzles.worker.import_pages import mappings

SMAPS = """\
7f0000000000-7f0000400000 r-xp 00000000 08:01 11 /venv/lib/jaxlib/libjax_common.so
Size:               4096 kB
Rss:                2048 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd ex mr mw me
7f0000400000-7f0000500000 r--p 00400000 08:01 11 /venv/lib/jaxlib/libjax_common.so
Rss:                 512 kB
Anonymous:           256 kB
Swap:                  0 kB
7f0000500000-7f0000600000 r--p 00500000 08:01 12 /venv/lib/numpy/_core/_umath.so
Anonymous:             0 kB
Swap:                 16 kB
7f0000600000-7f0000700000 rw-p 00600000 08:01 11 /venv/lib/jaxlib/libjax_common.so
Anonymous:             0 kB
7f0000700000-7f0000800000 r--s 00000000 08:01 13 /dev/shm/shared
Anonymous:             0 kB
7f0000800000-7f0000900000 r--p 00000000 00:00 0 \n\
Anonymous:             0 kB
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
Anonymous:             0 kB
7f0000900000-7f0000a00000 r--p 00000000 08:01 14 /usr/lib/with a space/libx.so (deleted)
Anonymous:             0 kB
"""


def test_only_private_read_only_file_mappings_without_a_page_of_their_own_are_let_go_of():
    listed = list(mappings(SMAPS.splitlines()))
    assert [m.start for m in listed] == [0x7F0000000000, 0x7F0000400000, 0x7F0000500000, 0x7F0000600000,
                                         0x7F0000700000, 0x7F0000800000, 0x7FFD00000000, 0x7F0000900000]
    assert listed[-1].path == "/usr/lib/with a space/libx.so (deleted)"
    assert [m.own_kib for m in listed[:3]] == [0, 256, 16]  # resident own pages, and swapped ones
    # code; relocated data made read-only (own pages); a swapped own page; writable data; a shared
    # mapping; anonymous memory; the kernel's; a file deleted since (its pages are still readable)
    assert [m.only_the_files_pages for m in listed] == [True, False, False, False, False, False, False, True]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps is Linux's")
def test_after_letting_go_of_the_imports_code_jax_computes_alike_here_and_in_a_fork():
    # As in the zygote: JAX imported (its backends not started), the pages let go of, then a fork.
    script = textwrap.dedent("""
        import os
        import jax.numpy as jnp
        import numpy as np
        from pallas_puzzles.worker.import_pages import let_go

        def resident_code_kib():
            total, code = 0, False
            for line in open("/proc/self/smaps"):
                fields = line.split()
                if not fields[0].endswith(":"):
                    code = fields[1] == "r-xp" and "/jaxlib/" in line
                elif code and fields[0] == "Rss:":
                    total += int(fields[1])
            return total

        def computed():
            return np.asarray(jnp.sin(jnp.arange(64.0, dtype=jnp.float32)) @ jnp.ones((64, 8), jnp.float32))

        expected = np.sin(np.arange(64.0, dtype=np.float32)) @ np.ones((64, 8), np.float32)
        resident = resident_code_kib()
        let_go_of = let_go()
        left = resident_code_kib()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if np.allclose(computed(), expected, rtol=1e-5) else 1)
        child = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print(resident, let_go_of >> 10, left, np.allclose(computed(), expected, rtol=1e-5), child)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    resident, let_go_of, left, same, child = done.stdout.split()
    assert int(resident) > 8 * 1024 and int(let_go_of) >= int(resident)  # the import's code was resident
    assert int(left) < 1024  # and went
    assert same == "True" and child == "0"
