"""The one place every command ends: its exit code, and what the learner sees when it fails.

- `UserError`: one sentence, exit 2.
- A file-system error: one sentence naming the file and what to do, exit 2.
- Ctrl-C: exit 130, quietly. A closed stdout (`| head`): exit 1, quietly.
- Anything else is our bug: one sentence naming a log file that holds the
  traceback and the versions, exit 3. No traceback reaches the terminal.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

from pallas_puzzles import environment, versions
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, UserError

Say = Callable[[str], None]


def file_system_sentence(exc: OSError) -> str:
    where = exc.filename or "a file"
    reason = exc.strerror or type(exc).__name__
    return (f"{reason}: {where}. Check that this path exists and that you may write there "
            f"(a read-only folder or a full disk), then run the command again.")


def log_folder() -> Path:
    return environment.cache_home() / "pallas-puzzles" / "logs"


def _version(package: str) -> str:
    return versions.installed(package) or "not installed"


def write_crash_log(exc: BaseException) -> Path:
    """Keep the traceback and the versions where a bug report can quote them."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = "\n".join([
        f"pallas-puzzles {versions.ours()} crashed at {stamp}",
        f"command: {' '.join(sys.argv)}",
        f"python: {sys.version.split()[0]} on {platform.platform()}",
        f"jax: {_version('jax')}, jaxlib: {_version('jaxlib')}",
        "",
        "".join(traceback.format_exception(exc)),
    ])
    for folder in (log_folder(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"pallas-puzzles-crash-{stamp}-{os.getpid()}.log"
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    raise OSError("no writable folder for the crash log")


def run_guarded(action: Callable[[], int], say_error: Say) -> int:
    """Run a command and turn every way it can end into an exit code."""
    try:
        return action()
    except UserError as exc:
        say_error(exc.message)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read our output has gone; say nothing more to them.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAIL
    except OSError as exc:
        say_error(file_system_sentence(exc))
        return EXIT_USAGE
    except Exception as exc:
        try:
            where = f"the details are in {write_crash_log(exc)}"
        except OSError:
            where = "no log could be written"
        say_error(f"pallas-puzzles failed unexpectedly ({type(exc).__name__}: {exc}); {where}. "
                  f"Please report it with that file.")
        return EXIT_INTERNAL
