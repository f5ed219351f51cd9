"""The wheel carries the course: build it, install it in a fresh venv, use it."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_in_a_fresh_venv_and_runs(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(REPO)],
        check=True,
    )
    wheel = next(dist.glob("pallas_puzzles-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
    )
    # Reuse this environment's jax & co. instead of downloading them again; the
    # package itself must come from the wheel (.pth lines do not run other .pth files,
    # so an editable install here stays invisible there).
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "outer_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    env = {**os.environ, "COLUMNS": "120"}
    env.pop("PYTHONPATH", None)
    where = subprocess.run([str(python), "-c", "import pallas_puzzles; print(pallas_puzzles.__file__)"],
                           capture_output=True, text=True, env=env, check=True).stdout
    assert str(env_dir) in where, where

    command = env_dir / "bin" / "pallas-puzzles"
    made = subprocess.run([str(command), "init", "ws"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (tmp_path / "ws" / "exercises" / "01_constant_add.py").is_file()
    checked = subprocess.run([str(command), "verify", "1"],
                             cwd=tmp_path / "ws", capture_output=True, text=True, env=env)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "You have not started puzzle 1 yet" in checked.stdout
    solution = subprocess.run([str(command), "solution", "1", "--yes"],
                              cwd=tmp_path / "ws", capture_output=True, text=True, env=env)
    assert solution.returncode == 0 and "x_ref[...] + 10.0" in solution.stdout
    # The wheel carries dev new's starter course, and the built-in course's mistakes for dev check.
    started = subprocess.run([str(command), "dev", "new", "my-course"],
                             cwd=tmp_path, capture_output=True, text=True, env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    assert (sorted(p.name for p in (tmp_path / "my-course" / "exercises").iterdir())
            == ["01_scale.py", "02_scale_blocked.py"])
    assert (Path(where.strip()).parent / "course" / "builtin" / "mistakes.toml").is_file()
    # What dev new points a pip-installed author at works from the wheel alone: the guide, the time limits.
    assert "`pallas-puzzles dev guide`" in started.stdout and "`pallas-puzzles dev times my-course" in started.stdout
    guide = subprocess.run([str(command), "dev", "guide"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert guide.returncode == 0 and guide.stdout == (REPO / "docs" / "course-format.md").read_text()
    timed = subprocess.run([str(command), "dev", "times", "my-course", "--only", "scale", "--write"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
    assert timed.returncode == 0, timed.stdout + timed.stderr
    assert "puzzle  1 scale:" in timed.stdout and (tmp_path / "my-course" / "reference_times.toml").is_file()


@pytest.mark.slow
def test_the_wheel_carries_one_whole_course(tmp_path):
    """The repository keeps exercises/ and solutions/ at its top and the course definition in the package;
    the wheel joins them into one course folder, pallas_puzzles/course/builtin/, with every puzzle's files."""
    import zipfile

    from pallas_puzzles.course.reader import load_course

    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(REPO)],
        check=True,
    )
    names = set(zipfile.ZipFile(next(dist.glob("pallas_puzzles-*.whl"))).namelist())
    course = load_course()
    inside = "pallas_puzzles/course/builtin/"
    expected = {f"{inside}{folder}/{p.file}" for p in course.puzzles for folder in ("exercises", "solutions")}
    expected |= {f"{inside}specs/{p.spec_path.name}" for p in course.puzzles}
    expected |= {f"{inside}{name}" for name in ("course.toml", "mistakes.toml", "correct.toml")}
    assert not expected - names, sorted(expected - names)
