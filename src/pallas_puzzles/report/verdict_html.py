"""The notebook format (Jupyter, Colab): a check's verdict, the course list and the grid view as HTML.

The same content as the terminal's: each finding with the lines it names and
its explanation, the mismatch table, the block map and the advice, in the
words of `sentences`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from pallas_puzzles import backends
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import sentences
from pallas_puzzles.report.formats import Format, Verdict
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch, value_text

if TYPE_CHECKING:
    from pallas_puzzles.report.frames import GridView
    from pallas_puzzles.workspace.progress import Progress

STYLE = """<style>
.pp-verdict{font:14px system-ui,sans-serif;border-left:4px solid #c0362c;padding:6px 12px;margin:4px 0}
.pp-verdict.pp-pass{border-color:#1a7f37} .pp-verdict.pp-todo{border-color:#b58900}
.pp-verdict h3{margin:2px 0 6px;font-size:15px}
.pp-verdict .pp-ok{color:#1a7f37} .pp-verdict .pp-bad{color:#c0362c} .pp-verdict .pp-dim{color:#666}
.pp-verdict pre{margin:4px 0;padding:4px 8px;background:#f6f8fa;line-height:1.15}
.pp-verdict table{border-collapse:collapse;margin:4px 0}
.pp-verdict td,.pp-verdict th{padding:1px 10px;text-align:right;border-bottom:1px solid #ddd}
.pp-verdict table.pp-list td,.pp-verdict table.pp-list th{text-align:left}
.pp-verdict .pp-advice{color:#8a5a00} .pp-m-x{color:#c0362c;font-weight:bold} .pp-m-N{color:#9b30b5;font-weight:bold}
.pp-m-q{color:#b58900;font-weight:bold} .pp-m-ok{color:#1a7f37}
</style>"""

MAP_CLASS = {".": ("·", "pp-m-ok"), "x": ("x", "pp-m-x"), "N": ("N", "pp-m-N"), "?": ("?", "pp-m-q")}

Namer = Callable[[str, int], str]  # (file, line) -> how to name that place, e.g. "Cell In[3], line 4"


def _place(file: str, line: int) -> str:
    return f"{file}:{line}"


def _e(text: object) -> str:
    return html.escape(str(text))


def _lines(where: tuple, name: Namer) -> str:
    return "<pre>" + "\n".join(f"{_e(name(w.file, w.line))}  │ {_e(w.text)}" for w in where) + "</pre>" if where else ""


def _finding(finding: Finding, name: Namer = _place) -> str:
    where = sentences.finding_place(finding)
    return (f"<p class='pp-bad'><b>{_e(finding.message)}</b>{'<br>' + _e(where) if where else ''}</p>"
            f"{_lines(finding.where, name)}"
            f"<p class='pp-advice'>→ {_e(finding.explanation)}</p>")


def mismatch_html(m: Mismatch, advise: bool = True, name: Namer = _place) -> str:
    rows = "".join(f"<tr><td>{bad.index}</td><td>{value_text(bad.expected)}</td>"
                   f"<td class='pp-bad'>{value_text(bad.got, bad.fault)}</td></tr>" for bad in m.examples)
    cells = "\n".join("".join(f"<span class='{MAP_CLASS[c][1]}'>{MAP_CLASS[c][0]}</span> " for c in row)
                      for row in m.block_map)
    legend = " &nbsp; ".join(f"{MAP_CLASS[c][0]} {_e(label)}" for c, label in sentences.MAP_LEGEND)
    parts = [
        f"<p class='pp-bad'><b>{_e(sentences.mismatch_counts(m))}</b></p>",
        f"<p class='pp-dim'>{_e(sentences.mismatch_scope(m))}</p>",
        f"<table class='pp-mismatch'><tr><th>index</th><th>expected</th><th>got</th></tr>{rows}</table>",
        f"<p>{_e(sentences.block_map_heading(m))}</p><pre class='pp-block-map'>{cells}</pre>",
        f"<p class='pp-dim'>{legend}</p>",
    ]
    if m.origin():
        parts.append(f"<p><b>{_e(m.origin())}</b></p>{_lines(m.stored_at, name)}")
    if advise:
        parts.append(f"<p class='pp-advice'>→ {_e(m.kind.explanation)}</p>")
    return "".join(parts)


def _case(case: CaseResult, name: Namer) -> str:
    if case.passed:
        return f"<p class='pp-ok'>{_e(sentences.case_outcome(case))}</p>"
    parts = [f"<p class='pp-bad'><b>{_e(sentences.case_outcome(case))}</b></p>"]
    parts.extend(_finding(f, name) for f in case.findings)
    if case.mismatch is not None:
        parts.append(mismatch_html(case.mismatch, not case.findings, name))
    return "".join(parts)


def render_check(result: CheckResult, puzzle: Puzzle, name: Namer = _place) -> str:
    """The verdict; `name` says how to name a line of the learner's code (a notebook names cells)."""
    title = _e(sentences.puzzle_title(puzzle))
    footer = f"<p class='pp-dim'>{_e(sentences.footer(result))}</p>"
    printed = (f"<p class='pp-dim'>{_e(sentences.PRINTED)}:</p><pre>{_e(result.printed)}</pre>"
               if result.printed.strip() else "")
    if result.passed:
        return (f"{STYLE}<div class='pp-verdict pp-pass'><h3 class='pp-ok'>✓ {title}</h3>"
                f"<p class='pp-ok'>{_e(sentences.passed_cases(result))}</p>{footer}{printed}</div>")
    if result.not_started:
        found = next(f for f in result.findings if f.kind is FindingKind.NOT_STARTED)
        return (f"{STYLE}<div class='pp-verdict pp-todo'><h3>○ {title}</h3><p><b>{_e(found.message)}</b></p>"
                f"<p>{_e(sentences.NOT_STARTED_TASK)}</p>{_lines(found.where, name)}</div>")
    named = name(result.file, 1)  # a notebook cell: "Cell In[3], line 1" -> "Cell In[3]"
    source = named.split(",")[0] if named != _place(result.file, 1) else result.file
    body = [f"<p class='pp-dim'>Code: {_e(source)}</p>"]
    body.extend(_finding(f, name) for f in result.findings)
    body.extend(_case(c, name) for c in result.cases)
    if result.skipped_cases:
        body.append(f"<p class='pp-dim'>{_e(sentences.cases_not_run(result))}</p>")
    return (f"{STYLE}<div class='pp-verdict pp-fail'><h3 class='pp-bad'>✗ {title}</h3>"
            f"{''.join(body)}{footer}{printed}</div>")


def render_list(progress: Progress) -> str:
    """The course as a table: number, title, status, the backends it runs on, hints."""
    rows = []
    for puzzle in progress.course.puzzles:
        status = "tour" if puzzle.tour else "solved" if progress.is_solved(puzzle) else ""
        runs = [b for b in backends.REGISTRY if puzzle.supports(backends.get(b))]
        rows.append(f"<tr><td>{puzzle.number}</td><td>{_e(puzzle.title)}</td><td><code>{_e(puzzle.name)}</code></td>"
                    f"<td class='{'pp-ok' if status else 'pp-dim'}'>{status}</td><td>{', '.join(runs)}</td>"
                    f"<td>{len(puzzle.hints)}</td></tr>")
    head = "<tr><th>#</th><th>puzzle</th><th>name</th><th>status</th><th>runs on</th><th>hints</th></tr>"
    return (f"{STYLE}<div class='pp-verdict pp-pass'><h3>{_e(progress.course.title)}</h3>"
            f"<table class='pp-list'>{head}{''.join(rows)}</table>"
            f"<p class='pp-dim'>Solved here: {progress.solved_count} of {progress.total}. "
            f"pp.exercise(N) starts one, pp.hint(N) gives its next hint.</p></div>")


class NotebookFormat(Format):
    """HTML fragments for a notebook's output area."""

    name = "notebook"

    def __init__(self, name: Namer = _place) -> None:
        self.name_place = name

    def check(self, verdict: Verdict) -> str:
        return render_check(verdict.result, verdict.puzzle, self.name_place)

    def listing(self, progress: Progress) -> str:
        return render_list(progress)

    def grid(self, view: GridView) -> str:
        from pallas_puzzles.report.grid_html import render_page

        page = render_page(view)
        # An iframe keeps the page's script and styles apart from the notebook's.
        return (f'<iframe srcdoc="{html.escape(page, quote=True)}" style="width:100%;height:560px;'
                f'border:1px solid #ddd" sandbox="allow-scripts"></iframe>')
