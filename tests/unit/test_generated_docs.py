"""The docs' generated tables match their sources: a stale one fails here, naming its file and block."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from pallas_puzzles.course.reader import load_course

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "generate_docs.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("generate_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate_docs = _load_script()


def test_every_generated_block_is_up_to_date():
    assert generate_docs.problems(generate_docs.pages(), load_course(), write=False) == []


def test_every_table_has_its_place_in_the_docs():
    placed = {name for page in generate_docs.pages()
              for name in generate_docs.blocks(page.read_text(encoding="utf-8"))}
    assert placed == set(generate_docs.GENERATORS)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "chapters" in generate_docs.blocks(readme)


def test_a_stale_block_is_named_with_its_file_and_rewritten(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("Intro.\n\n<!-- generated chapters -->\n| an old table |\n<!-- /generated -->\n\nAfter.\n")
    course = load_course()
    found = generate_docs.problems([page], course, write=False)
    assert len(found) == 1 and str(page) in found[0] and "'chapters' is stale" in found[0]
    assert "| an old table |" in page.read_text(), "--check writes nothing"

    assert generate_docs.problems([page], course, write=True) == []
    text = page.read_text()
    assert "| an old table |" not in text and text.startswith("Intro.\n\n") and text.endswith("\n\nAfter.\n")
    assert generate_docs.problems([page], course, write=False) == []


def test_a_block_with_no_generator_is_a_problem(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("<!-- generated chapter-list -->\n<!-- /generated -->\n")
    found = generate_docs.problems([page], load_course(), write=True)
    assert len(found) == 1 and "no generator for the block 'chapter-list'" in found[0]


def test_the_course_tables_name_every_chapter_and_puzzle():
    course = load_course()
    chapters, puzzles = generate_docs.chapters(course), generate_docs.puzzles(course)
    for chapter in course.chapters:
        assert chapter.title in chapters and chapter.title in puzzles
    for puzzle in course.puzzles:
        assert f"| {puzzle.number} | `{puzzle.name}` |" in puzzles
    numbers = [p.number for p in course.puzzles]
    assert f"| {min(numbers)}–" in chapters and f"–{max(numbers)} |" in chapters


def test_the_finding_and_environment_tables_list_every_entry():
    from pallas_puzzles import environment
    from pallas_puzzles.findings import FindingKind

    kinds = generate_docs.finding_kinds(load_course())
    assert all(f"| `{kind.id}` | {kind.label} |" in kinds for kind in FindingKind)
    variables = generate_docs.environment_variables(load_course())
    assert all(f"| `{v.name}` |" in variables for v in environment.VARIABLES)


def test_a_table_cell_keeps_its_text_on_one_line_and_escapes_pipes():
    assert generate_docs._cell("a | b\n  c") == "a \\| b c"


def test_the_command_checks_every_page_without_starting_jax():
    """`python scripts/generate_docs.py --check --no-samples`, as the docs give it: exit 0, and no JAX
    (the generator runs wherever the docs are edited, and this tier imports no JAX)."""
    probe = (f"import runpy, sys; sys.argv = [{str(SCRIPT)!r}, '--check', '--no-samples'];"
             f"code = runpy.run_path({str(SCRIPT)!r})['main'](sys.argv[1:]);"
             f"print(code, 'jax' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr
