"""What this environment's jax can run, said alike by `init`, `doctor` and the progress count (issue 32, item 10):
from the course's min_jax data, so a course whose puzzle needs a jax that does not exist yet shows it on any leg."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import run_cli


def _course_needing_a_future_jax(small_course: Path, folder: Path) -> Path:
    course = folder / "future-course"
    shutil.copytree(small_course, course)
    toml = course / "course.toml"
    text = toml.read_text()
    marker = 'name = "scale_blocked"\n'
    assert marker in text
    toml.write_text(text.replace(marker, marker + 'min_jax = "99.0"\n'))
    return course


def test_init_doctor_and_the_progress_count_name_what_this_jax_cannot_run(small_course, tmp_path):
    course = _course_needing_a_future_jax(small_course, tmp_path)
    made = run_cli("init", "--course", str(course), "ws", cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    said = " ".join(made.stdout.split())
    assert "2 puzzles." in said
    assert "This environment's jax runs 1 of them: puzzle 2 needs jax 99.0 or newer (on Python 3.12 or newer)" in said

    doctor = run_cli("doctor", cwd=tmp_path / "ws", env={"COLUMNS": "200"})
    line = next(line for line in doctor.stdout.splitlines() if line.startswith("│ puzzles"))
    assert "this jax runs 1 of 2: puzzle 2 needs jax 99.0 (Python 3.12)" in line, doctor.stdout
    assert doctor.returncode == 0, doctor.stdout  # the other puzzle runs: not a broken install

    listed = run_cli("list", cwd=tmp_path / "ws", env={"COLUMNS": "80"})
    assert "0/1 solved (puzzle 2 needs jax 99.0)" in listed.stdout, listed.stdout
