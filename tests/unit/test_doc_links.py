"""Every relative link in README.md, CONTRIBUTING.md and docs/ leads to a file that exists, and every
link to a heading (`page.md#heading`) to a heading that exists."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]]+\]:\s*(\S+)", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def links(text: str) -> list[str]:
    """The targets of a page's Markdown links, outside code."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    return [inline or reference for inline, reference in LINK.findall(prose)]


def anchor(heading: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        base, n = anchor(heading), 0
        while (candidate := base if n == 0 else f"{base}-{n}") in found:
            n += 1
        found.add(candidate)
    return found


def broken(page: Path) -> list[str]:
    """Each relative link of a page that leads nowhere, with why."""
    problems = []
    text = page.read_text(encoding="utf-8")
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:: not ours to check here
            continue
        path_part, _, fragment = target.partition("#")
        destination = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not destination.exists():
            problems.append(f"{target}: no such file")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(
                destination.read_text(encoding="utf-8")):
            problems.append(f"{target}: no heading '{fragment}' in {destination.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(page: Path):
    assert broken(page) == []


def test_the_pages_exist_and_link_to_each_other():
    assert len(PAGES) >= 8 and all(p.is_file() for p in PAGES[:2])
    linked = {(page.parent / t.partition("#")[0]).resolve() for page in PAGES
              for t in links(page.read_text(encoding="utf-8")) if t.partition("#")[0].endswith(".md")}
    unreachable = [p.relative_to(REPO).as_posix() for p in PAGES[1:] if p.resolve() not in linked]
    assert unreachable == [], "a page no other page links to is a page nobody finds"


def test_the_checker_finds_a_missing_file_a_missing_heading_and_skips_code(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Other page\n\n## What a check does (puzzles 25–30)\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md) [ok](other.md#what-a-check-does-puzzles-2530) [web](https://x.org/none)\n"
                    "[gone](missing.md) [bad](other.md#nowhere) [self](#top)\n"
                    "`[code](not-checked.md)`\n```\n[fenced](not-checked.md)\n```\n\n# Top\n"
                    "[ref]: gone-too.md\n")
    assert broken(page) == ["missing.md: no such file", "other.md#nowhere: no heading 'nowhere' in other.md",
                            "gone-too.md: no such file"]


def test_headings_become_githubs_anchors():
    assert anchor("The grid view (`show`)") == "the-grid-view-show"
    assert anchor("Check it: `pallas-puzzles dev check [DIR]`") == "check-it-pallas-puzzles-dev-check-dir"
    assert anchors("# A\n## A\n## A\n") == {"a", "a-1", "a-2"}
