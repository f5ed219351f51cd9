"""A check's verdict as an HTML fragment, for notebooks (Jupyter, Colab).

The same content as the terminal panel: each finding with the lines it names
and its explanation, the mismatch table, the block map and the advice.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable

from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import (
    CaseResult,
    CheckResult,
    Finding,
    Mismatch,
    value_text,
)

STYLE = """<style>
.pp-verdict{font:14px system-ui,sans-serif;border-left:4px solid #c0362c;padding:6px 12px;margin:4px 0}
.pp-verdict.pp-pass{border-color:#1a7f37} .pp-verdict h3{margin:2px 0 6px;font-size:15px}
.pp-verdict .pp-ok{color:#1a7f37} .pp-verdict .pp-bad{color:#c0362c} .pp-verdict .pp-dim{color:#666}
.pp-verdict pre{margin:4px 0;padding:4px 8px;background:#f6f8fa;line-height:1.15}
.pp-verdict table.pp-mismatch{border-collapse:collapse;margin:4px 0}
.pp-verdict table.pp-mismatch td,.pp-verdict table.pp-mismatch th{padding:1px 10px;text-align:right;border-bottom:1px solid #ddd}
.pp-verdict .pp-advice{color:#8a5a00} .pp-m-x{color:#c0362c;font-weight:bold} .pp-m-N{color:#9b30b5;font-weight:bold}
.pp-m-q{color:#b58900;font-weight:bold} .pp-m-ok{color:#1a7f37}
</style>"""

MAP_CLASS = {".": ("·", "pp-m-ok"), "x": ("x", "pp-m-x"), "N": ("N", "pp-m-N"), "?": ("?", "pp-m-q")}


Namer = Callable[[str, int], str]  # (file, line) -> how to name that place, e.g. "Cell In[3], line 4"


def _place(file: str, line: int) -> str:
    return f"{file}:{line}"


def _finding(finding: Finding, name: Namer = _place) -> str:
    parts = [f"<p class='pp-bad'><b>{html.escape(finding.message)}</b></p>"]
    if finding.where:
        lines = "\n".join(f"{html.escape(name(line.file, line.line))}  │ {html.escape(line.text)}"
                           for line in finding.where)
        parts.append(f"<pre>{lines}</pre>")
    parts.append(f"<p class='pp-advice'>→ {html.escape(finding.explanation)}</p>")
    return "".join(parts)


def mismatch_html(m: Mismatch, advise: bool = True) -> str:
    counts = f"{m.n_bad} of {m.total} output elements are wrong"
    extras = [f"{m.n_unwritten} never written"] if m.n_unwritten else []
    extras += [f"{m.n_nan} NaN/garbage"] if m.n_nan else []
    if not math.isnan(m.max_abs_error):
        extras.append(f"max abs error {m.max_abs_error:.3g}")
    rows = "".join(f"<tr><td>{bad.index}</td><td>{value_text(bad.expected)}</td>"
                   f"<td class='pp-bad'>{value_text(bad.got, bad.fault)}</td></tr>" for bad in m.examples)
    cells = "\n".join("".join(f"<span class='{MAP_CLASS[c][1]}'>{MAP_CLASS[c][0]}</span> " for c in row)
                      for row in m.block_map)
    parts = [
        f"<p class='pp-bad'><b>{counts}{' (' + ', '.join(extras) + ')' if extras else ''}</b></p>",
        f"<p class='pp-dim'>Output shape {m.shape}; tolerance rtol={m.rtol:g}, atol={m.atol:g}. First mismatches:</p>",
        f"<table class='pp-mismatch'><tr><th>index</th><th>expected</th><th>got</th></tr>{rows}</table>",
        f"<p>Where, {html.escape(m.block_map_title)}:</p><pre class='pp-block-map'>{cells}</pre>",
        "<p class='pp-dim'>· right &nbsp; x wrong &nbsp; N NaN/garbage &nbsp; ? never written</p>",
    ]
    if advise:
        parts.append(f"<p class='pp-advice'>→ {html.escape(m.kind.explanation)}</p>")
    return "".join(parts)


def _case(case: CaseResult, advise: bool, name: Namer) -> str:
    if case.passed:
        return f"<p class='pp-ok'>Shape case {html.escape(case.label)}: passed</p>"
    parts = [f"<p><b>Shape case {html.escape(case.label)}:</b> <span class='pp-bad'>failed</span></p>"]
    parts.extend(_finding(f, name) for f in case.findings)
    if case.mismatch is not None:
        parts.append(mismatch_html(case.mismatch, advise))
    return "".join(parts)


def render_check(result: CheckResult, puzzle: Puzzle, name: Namer = _place) -> str:
    """The verdict; `name` says how to name a line of the learner's code (a notebook names cells)."""
    title = f"Puzzle {puzzle.number}: {html.escape(puzzle.title)}"
    footer = f"<p class='pp-dim'>backend {html.escape(result.backend)} · {result.seconds:.2f} s</p>"
    printed = (f"<p class='pp-dim'>Your code printed:</p><pre>{html.escape(result.printed)}</pre>"
               if result.printed.strip() else "")
    if result.passed:
        cases = "; ".join(html.escape(c.label) for c in result.cases)
        return (f"{STYLE}<div class='pp-verdict pp-pass'><h3 class='pp-ok'>✓ {title}</h3>"
                f"<p class='pp-ok'>passed {len(result.cases)} shape cases ({cases})</p>{footer}{printed}</div>")
    named = name(result.file, 1)  # a notebook cell: "Cell In[3], line 1" -> "Cell In[3]"
    source = named.split(",")[0] if named != _place(result.file, 1) else result.file
    body = [f"<p class='pp-dim'>Code: {html.escape(source)}</p>"]
    body.extend(_finding(f, name) for f in result.findings)
    body.extend(_case(c, not result.not_started, name) for c in result.cases)
    if result.skipped_cases:
        body.append(f"<p class='pp-dim'>({result.skipped_cases} more shape case(s) not run: fix this one first)</p>")
    return (f"{STYLE}<div class='pp-verdict pp-fail'><h3 class='pp-bad'>✗ {title}</h3>"
            f"{''.join(body)}{footer}{printed}</div>")
