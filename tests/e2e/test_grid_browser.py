"""`show --html` in a real headless browser: the page's own script draws each step.

Chromium comes from the distribution's packages (.ci/run installs it where it
is missing). The page opens at `#step=K`; `--dump-dom` returns the document
after its script ran, so what we parse is what a learner would see.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome-headless-shell", "chromium-headless-shell")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium here: apt-get install chromium (.ci/run does)")


def rendered(page: Path, step: int, profile: Path) -> str:
    """The page's DOM after its script ran, opened at grid step `step` (1-based)."""
    assert BROWSER is not None
    done = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
         "--virtual-time-budget=3000", "--dump-dom", f"{page.as_uri()}#step={step}"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0 and "<svg" in done.stdout, done.stderr[-2000:]
    return done.stdout


def _rects(dom: str, board: str) -> list[str]:
    svg = re.search(rf'<svg id="{board}".*?</svg>', dom, re.S)
    assert svg is not None, f"no {board} in the page"
    return re.findall(r"<rect [^>]*>", svg.group(0))


def _current(dom: str, board: int) -> list[str]:
    return [re.search(r'id="([^"]+)"', r).group(1) for r in _rects(dom, f"board-{board}") if "current" in r]


def test_page_renders_the_grid_and_steps_through_it(workspace: Path, cli, tmp_path: Path) -> None:
    from pallas_puzzles.cli import app

    result = cli.invoke(app, ["show", "outer_add_blocked", "--solution", "--html", "out.html", "--no-open"])
    assert result.exit_code == 0, result.output
    page = workspace / "out.html"

    first = rendered(page, 1, tmp_path / "profile")
    points = _rects(first, "grid-points")
    assert len(points) == 6  # grid (3, 2): one cell per grid point
    assert [("now" in r) for r in points] == [True, False, False, False, False, False]
    assert "step 1 of 6 · grid point (0, 0)" in first
    assert len(_rects(first, "board-2")) == 6  # z: 3x2 blocks of 128x128
    assert _current(first, 2) == ["b2-0-0"]  # step 1 writes z's block (0, 0)

    fourth = rendered(page, 4, tmp_path / "profile")
    assert "step 4 of 6 · grid point (1, 1)" in fourth
    assert ["now" in r for r in _rects(fourth, "grid-points")].index(True) == 3
    assert _current(fourth, 2) == ["b2-1-1"]  # the highlighted output block moved with the step
    assert _current(fourth, 0) == ["b0-0-1"]  # x's block 1, copied in again
    y_block = next(r for r in _rects(fourth, "board-1") if "current" in r)
    assert "reused" in y_block  # y's block is the same as on step 3
    visited = [r for r in _rects(fourth, "board-2") if "visited" in r]
    assert len(visited) == 3  # steps 1-3 wrote three blocks before this one


def test_page_marks_the_block_an_index_map_chose_outside_the_array(workspace: Path, cli, tmp_path: Path) -> None:
    """The swapped-maps mistake of puzzle 4, as the page draws it: the faulting step and block are unmistakable."""
    from helpers import swapped_maps

    from pallas_puzzles.cli import app

    swapped_maps(workspace / "exercises")
    result = cli.invoke(app, ["show", "outer_add_blocked", "--html", "swapped.html", "--no-open"])
    assert result.exit_code == 1, result.output
    dom = rendered(workspace / "swapped.html", 5, tmp_path / "profile")
    label = re.sub(r"<[^>]+>", "", re.search(r'id="pp-step-label">(.*?)</div>', dom, re.S).group(1))
    assert label == "step 5 of 6 · grid point (2, 0) · ✗ the fault above happened at this step"
    assert '<span class="bad">' in dom  # and in the page's red
    assert "The kernel never ran" in dom and "stopped after 0" not in dom
    x, y, z = (_rects(dom, f"board-{k}") for k in range(3))
    assert len(x) == 3 and len(y) == 3 and len(z) == 6  # x: 2 blocks and the one past its end; all drawn
    outside = [r for r in x if "outside" in r]
    assert len(outside) == 1 and "current" in outside[0]  # the faulting block is the one lit at this step
    assert "whole array" not in dom
    assert "outside the array (valid block indices 0..1)" in dom  # what x's block is, in words
    legend = re.findall(r"<div class=\"legend dim\">(.*?)</div>", dom, re.S)
    assert any("outside the array" in part for part in legend) and any("grid points" in part for part in legend)
