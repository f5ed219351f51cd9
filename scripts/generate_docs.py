"""The docs' tables that would drift, generated from their one source each.

    python scripts/generate_docs.py                 rewrite every generated block and sample verdict
    python scripts/generate_docs.py --check         exit 1, naming each stale file and block
    python scripts/generate_docs.py --no-samples    leave the sample verdicts alone (they run the real tool)

A generated block sits in README.md, CONTRIBUTING.md or a page under docs/, between
`<!-- generated NAME -->` and `<!-- /generated -->`:

    chapters       the chapters and their puzzle numbers   the built-in course (course.reader.load_course)
    puzzles        every puzzle, chapter by chapter        the built-in course
    finding-kinds  every finding kind, label, explanation  findings.toml, in findings.FindingKind's order
    targets        the built-in targets                    engine/targets/__init__.py's BUILTIN registry
    environment    every environment variable the tool reads  pallas_puzzles.environment

Sample verdicts (`<!-- sample NAME -->`) are printed by the real tool: scripts/readme_samples.py.
tests/unit/test_generated_docs.py fails when a block is stale; tests/test_readme.py, when a sample is.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))  # the clone's own package: its course, catalogue and registry

from pallas_puzzles import environment, versions  # noqa: E402
from pallas_puzzles.course.model import Course, Puzzle  # noqa: E402
from pallas_puzzles.course.reader import load_course  # noqa: E402
from pallas_puzzles.engine import targets as registry  # noqa: E402  (no jax: targets import it on use)
from pallas_puzzles.findings import FindingKind  # noqa: E402

BLOCK = re.compile(r"(<!-- generated (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)
COMMAND = "python scripts/generate_docs.py"


def pages() -> list[Path]:
    """Every page that may hold a generated block or a sample verdict."""
    found = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]
    return [page for page in found if page.is_file()]


def _cell(text: str) -> str:
    """Text made safe for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def _numbers(puzzles: tuple[Puzzle, ...]) -> str:
    """"0–12" for a run of consecutive numbers, else the numbers listed."""
    numbers = [p.number for p in puzzles]
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
        return f"{numbers[0]}–{numbers[-1]}"
    return ", ".join(map(str, numbers))


def _needs(puzzles: tuple[Puzzle, ...]) -> str:
    """What every puzzle of a chapter needs beyond the oldest supported jax ("" when nothing): the jax
    its APIs need, and the newer one its target on the CPU needs, where that is newer."""
    wanted = {p.min_jax for p in puzzles}
    on_cpu = {registry.get(p.target).min_jax for p in puzzles}
    if len(wanted) != 1 or "" in wanted or len(on_cpu) != 1:
        return ""
    jax, interpreted = wanted.pop(), on_cpu.pop()
    if interpreted and versions.parse(interpreted) > versions.parse(jax):
        return (f"jax ≥ {interpreted} on the CPU and ≥ {jax} compiled on a GPU, "
                f"so Python {versions.python_for(jax)} or newer")
    return f"jax ≥ {jax}, so Python {versions.python_for(jax)} or newer"


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", " ".join(text.split()), maxsplit=1)[0]


def chapters(course: Course) -> str:
    rows = ["| puzzles | chapter | what it covers |", "|---|---|---|"]
    for chapter in course.chapters:
        puzzles = course.in_chapter(chapter)
        needs = _needs(puzzles)
        title = f"{chapter.title} (needs {needs})" if needs else chapter.title
        rows.append(f"| {_numbers(puzzles)} | {_cell(title)} | {_cell(_first_sentence(chapter.intro))} |")
    return "\n".join(rows) + "\n"


def puzzles(course: Course) -> str:
    parts = []
    for chapter in course.chapters:
        members = course.in_chapter(chapter)
        needs = _needs(members)
        parts.append(f"### {chapter.number}. {chapter.title} (puzzles {_numbers(members)})\n\n"
                     f"{' '.join(chapter.intro.split())}{f' Needs {needs}.' if needs else ''}\n\n"
                     "| # | name | puzzle | teaches | backends |\n|---|---|---|---|---|\n"
                     + "".join(f"| {p.number} | `{p.name}` | {_cell(p.title)} | {_cell(p.summary)} | "
                               f"{', '.join(p.backends)} |\n" for p in members))
    return "\n".join(parts)


def finding_kinds(_: Course) -> str:
    rows = ["| kind | label | what it usually means |", "|---|---|---|"]
    rows += [f"| `{kind.id}` | {_cell(kind.label)} | {_cell(kind.explanation)} |" for kind in FindingKind]
    return "\n".join(rows) + "\n"


def targets(_: Course) -> str:
    rows = ["| target | what it does | elsewhere | defined in |", "|---|---|---|---|"]
    for name, target in registry.BUILTIN.items():
        partners = ", ".join(f"{where}: `{partner}`" for where, partner in target.partners.items())
        needs = f" (jax ≥ {target.min_jax})" if target.min_jax else ""
        module = Path(*target.__module__.split(".")).with_suffix(".py")
        rows.append(f"| `{name}` | {_cell(target.summary)}{needs} | {partners} | `src/{module.as_posix()}` |")
    return "\n".join(rows) + "\n"


def environment_variables(_: Course) -> str:
    rows = ["| variable | what it does |", "|---|---|"]
    rows += [f"| `{v.name}` | {_cell(v.meaning)} |" for v in environment.VARIABLES]
    rows += [f"| {', '.join(f'`{p}*`' for p in f.prefixes)} | {_cell(f.meaning)} |" for f in environment.FAMILIES]
    return "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[Course], str]] = {
    "chapters": chapters,
    "puzzles": puzzles,
    "finding-kinds": finding_kinds,
    "targets": targets,
    "environment": environment_variables,
}


def regenerate(text: str, course: Course) -> tuple[str, list[str], list[str]]:
    """The page with every generated block rewritten; the names of the blocks that changed, and of
    any block with no generator."""
    changed: list[str] = []
    unknown: list[str] = []

    def fresh(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATORS:
            unknown.append(name)
            return match.group(0)
        body = GENERATORS[name](course)
        if body != match.group("body"):
            changed.append(name)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(fresh, text), changed, unknown


def blocks(text: str) -> list[str]:
    """The names of the generated blocks in a page, in order."""
    return [m.group("name") for m in BLOCK.finditer(text)]


def problems(paths: list[Path], course: Course, write: bool) -> list[str]:
    """One line per stale or unknown block (rewriting the stale ones when `write`)."""
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new, changed, unknown = regenerate(text, course)
        where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        found += [f"{where}: there is no generator for the block '{name}' (one of {', '.join(GENERATORS)})"
                  for name in unknown]
        if changed and write:
            path.write_text(new, encoding="utf-8")
        elif changed:
            found += [f"{where}: the generated block '{name}' is stale; run {COMMAND}" for name in changed]
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the docs' generated tables and sample verdicts.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each stale block")
    parser.add_argument("--no-samples", action="store_true", help="leave the sample verdicts (they run the tool)")
    args = parser.parse_args(argv)
    found = problems(pages(), load_course(), write=not args.check)
    if not args.no_samples:
        sys.path.insert(0, str(REPO / "scripts"))
        import readme_samples

        found += readme_samples.stale(pages()) if args.check else readme_samples.rewrite(pages())
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
