"""What a new user hit (issue 8), each through the real command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pallas_puzzles.cli import app

REPO = Path(__file__).resolve().parents[2]


def flat(output: str) -> str:
    """The words of a rich panel, without its borders and line breaks."""
    return " ".join(output.replace("│", " ").split())


# -- init ------------------------------------------------------------------------


# -- the error boundary -----------------------------------------------------------


# -- a read-only workspace ----------------------------------------------------------


@pytest.fixture()
def read_only_workspace(workspace: Path) -> Iterator[Path]:
    """The workspace on a real read-only mount (root), or without write permission (others)."""
    shutil.copyfile(REPO / "solutions" / "01_constant_add.py",
                    workspace / "exercises" / "01_constant_add.py")
    if os.geteuid() == 0:
        done = subprocess.run(["mount", "--bind", "-o", "ro", str(workspace), str(workspace)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make a read-only mount here: {done.stderr.decode().strip()}")
        os.chdir(workspace)  # see the mount, not the directory underneath
        try:
            yield workspace
        finally:
            os.chdir(workspace.parent)
            subprocess.run(["umount", str(workspace)], check=True)
    else:
        for folder in (workspace, *[p for p in workspace.rglob("*") if p.is_dir()]):
            folder.chmod(0o555)
        try:
            yield workspace
        finally:
            for folder in (workspace, *[p for p in workspace.rglob("*") if p.is_dir()]):
                folder.chmod(0o755)


def test_read_only_workspace_still_verifies_and_hints(read_only_workspace, cli):
    with pytest.raises(OSError):
        (read_only_workspace / "probe").write_text("x")
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "passed 3 shape cases" in out
    assert "warning:" in out and "cannot be saved" in out
    assert "Traceback" not in result.output
    hint = cli.invoke(app, ["hint", "constant_add_blocked"])
    assert hint.exit_code == 0, hint.output
    assert "Hint 1/" in hint.output and "Traceback" not in hint.output


# -- smaller things ----------------------------------------------------------------------


def test_an_untouched_stub_says_not_started_instead_of_grid_advice(workspace, cli):
    result = cli.invoke(app, ["verify", "constant_add"])
    assert result.exit_code == 1
    out = flat(result.output)
    assert "You have not started puzzle 1 yet" in out and "TODO" in out
    assert "grid covers the whole output" not in out
    edited = workspace / "exercises" / "01_constant_add.py"
    edited.write_text(edited.read_text() + "\n# started\n")
    later = flat(cli.invoke(app, ["verify", "constant_add"]).output)
    assert "You have not started" not in later and "grid covers the whole output" in later


