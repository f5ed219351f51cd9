"""The step-through view as one self-contained HTML page: inline SVG, inline script, nothing fetched.

The SVG is drawn here (every block of every operand, and one cell per grid
point); the page's small script only changes which cells are highlighted as
the slider moves. `#step=K` in the address opens the page at step K (1-based).
"""

from __future__ import annotations

import html
import json

from pallas_puzzles.report import sentences
from pallas_puzzles.report.frames import GOOD, GridView, OperandBoard

GENERATOR_MARK = '<meta name="generator" content="pallas-puzzles show">'  # `show` overwrites only its own pages
CELL = 26  # pixels per block cell
MAX_GRID_WIDTH = 720  # pixels for the row of grid points

STYLE = """
body{font:14px system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px} .verdict{margin:4px 0 10px;font-weight:600}
.pass{color:#1a7f37} .fail{color:#c0362c} .dim{color:#666} .controls{margin:10px 0}
.controls input[type=range]{width:min(640px,90vw);vertical-align:middle}
.operand{display:inline-block;vertical-align:top;margin:8px 24px 8px 0}
.operand h2{font-size:14px;margin:0} .operand .move{font-size:13px;color:#055;min-height:1.2em}
rect{stroke:#fff;stroke-width:1} rect.cell{fill:#e6e6e6} rect.visited{fill:#9fd8a8}
rect.f-x{fill:#f2a7a0} rect.f-N{fill:#d9a3e6} rect.f-q{fill:#f5d77a}
rect.outside{fill:#fff;stroke:#c0362c;stroke-dasharray:3 2}
rect.current{fill:#1f77b4} rect.current.reused{fill:#7fb2dd} rect.current.bad{stroke:#c0362c;stroke-width:3}
rect.current.outside{fill:#c0362c;stroke:#7a1010;stroke-width:3;stroke-dasharray:none}
rect.gp{fill:#dfe6ee;cursor:pointer} rect.gp.done{fill:#b9c9da} rect.gp.badstep{fill:#f2a7a0}
rect.gp.now{fill:#1f77b4} rect.gp.now.badstep{fill:#c0362c;stroke:#7a1010;stroke-width:2}
.legend{margin:8px 0} .legend span{display:inline-block;width:14px;height:14px;margin:0 4px 0 12px;\
vertical-align:middle;box-sizing:border-box}
#pp-step-label{font-weight:600;margin-top:4px} #pp-step-label .bad{color:#c0362c}
.planned{color:#8a5a00}
"""

SCRIPT = """
(function(){
const V = JSON.parse(document.getElementById('pp-data').textContent);
const slider = document.getElementById('pp-step');
function show(step){
  step = Math.max(0, Math.min(V.steps - 1, step));
  slider.value = step;
  const label = document.getElementById('pp-step-label');
  const note = step === V.fault ? V.words.fault : V.bad.includes(step) ? V.words.bad : '';
  label.textContent = 'step ' + (step + 1) + ' of ' + V.steps + ' · grid point (' + V.points[step].join(', ') + ')';
  if (note) {
    const b = document.createElement('span');
    b.className = 'bad';
    b.textContent = ' · \\u2717 ' + note;
    label.appendChild(b);
  }
  document.body.dataset.step = step;
  V.boards.forEach(function(b, k){
    const done = new Set();
    for (let s = 0; s < step; s++) if (b.touched[s]) done.add(b.touched[s].join('-'));
    document.querySelectorAll('#board-' + k + ' rect').forEach(function(r){
      const key = r.dataset.r + '-' + r.dataset.c;
      r.classList.toggle('visited', done.has(key));
      r.classList.remove('current', 'reused', 'bad');
    });
    const now = b.touched[step];
    const move = document.getElementById('move-' + k);
    if (now) {
      const r = document.getElementById('b' + k + '-' + now[0] + '-' + now[1]);
      r.classList.add('current');
      if (!b.copied[step]) r.classList.add('reused');
      if (r.dataset.fault) r.classList.add('bad');
      move.textContent = b.describe[step];
    }
  });
  document.querySelectorAll('rect.gp').forEach(function(r){
    const s = +r.dataset.step;
    r.classList.toggle('now', s === step);
    r.classList.toggle('done', s < step);
  });
}
slider.addEventListener('input', function(){ show(+slider.value); });
document.querySelectorAll('rect.gp').forEach(function(r){
  r.addEventListener('click', function(){ show(+r.dataset.step); });
});
document.getElementById('pp-first-bad').addEventListener('click', function(){
  if (V.bad.length) show(V.bad[0]);
});
document.addEventListener('keydown', function(e){
  if (e.key === 'ArrowRight') show(+slider.value + 1);
  if (e.key === 'ArrowLeft') show(+slider.value - 1);
});
const m = /step=(\\d+)/.exec(location.hash);
show(m ? +m[1] - 1 : (V.bad.length ? V.bad[0] : 0));
})();
"""

FAULT_CLASS = {"x": "f-x", "N": "f-N", "?": "f-q"}


def _board_svg(k: int, board: OperandBoard) -> str:
    size = min(CELL, max(6, 720 // board.cols))
    rects = []
    for r in range(board.rows):
        for c in range(board.cols):
            fault = board.faults[r][c] if board.faults is not None else GOOD
            cls = "cell" + (f" {FAULT_CLASS[fault]}" if fault != GOOD else "")
            if (r, c) in board.outside:
                cls, fault = "cell outside", GOOD
            extra = f' data-fault="{fault}"' if fault != GOOD else ""
            rects.append(f'<rect id="b{k}-{r}-{c}" class="{cls}" data-r="{r}" data-c="{c}"{extra} '
                         f'x="{c * size}" y="{r * size}" width="{size}" height="{size}"/>')
    return (f'<svg id="board-{k}" width="{board.cols * size}" height="{board.rows * size}" '
            f'role="img" aria-label="blocks of {html.escape(board.name)}">{"".join(rects)}</svg>')


def _operand_html(k: int, board: OperandBoard) -> str:
    head = f"<h2>{html.escape(board.name)} <span class='dim'>{board.role} {board.shape} {board.dtype}"
    if board.block is not None:
        head += f", blocks of {board.block}"
    if board.group != (1, 1):
        head += f", each cell {board.group[0]}x{board.group[1]} blocks"
    if board.fold_note:
        head += f"<br>({board.fold_note})"
    head += "</span></h2>"
    if not board.pipelined:
        return f"<div class='operand'>{head}<div class='dim'>{html.escape(board.describe_block(0))}</div></div>"
    return f"<div class='operand'>{head}<div class='move' id='move-{k}'></div>{_board_svg(k, board)}</div>"


def _grid_points_svg(view: GridView) -> str:
    cols = view.grid[-1] if view.grid else 1
    rows = max(1, view.steps // max(1, cols))
    size = max(4, min(22, MAX_GRID_WIDTH // max(1, cols)))
    bad = set(view.bad_steps)
    rects = []
    for step, point in enumerate(view.points):
        r, c = divmod(step, cols)
        cls = "gp badstep" if step in bad else "gp"
        rects.append(f'<rect class="{cls}" data-step="{step}" x="{c * size}" y="{r * size}" width="{size}" '
                     f'height="{size}"><title>step {step + 1}: grid point {point}</title></rect>')
    return (f'<svg id="grid-points" width="{cols * size}" height="{rows * size}" role="img" '
            f'aria-label="one cell per grid point">{"".join(rects)}</svg>')


def _data(view: GridView) -> str:
    data = {
        "steps": view.steps, "points": [list(p) for p in view.points], "bad": list(view.bad_steps),
        "fault": view.fault_step,
        "boards": [{"touched": [list(t) if t is not None else None for t in b.touched],
                    "copied": list(b.copied), "describe": [b.describe_block(s) for s in range(len(b.touched))]}
                   for b in view.boards],
        "words": {"fault": sentences.FAULT_AT_STEP, "bad": sentences.BAD_BLOCK_AT_STEP},
    }
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


LEGEND_COLOURS = {"untouched": "#e6e6e6", "copied": "#1f77b4", "reused": "#7fb2dd", "visited": "#9fd8a8",
                  "x": "#f2a7a0", "N": "#d9a3e6", "?": "#f5d77a", "outside": "#c0362c"}


def _swatch(colour: str, label: str, border: str = "") -> str:
    return f"<span style='background:{colour};{border}'></span>{html.escape(label)}"


def _legend(view: GridView) -> str:
    """Every colour on the page, named: the blocks, then the grid points."""
    words = dict(sentences.GRID_LEGEND, untouched="not used yet")
    keys = ["copied", "reused", "visited", "untouched"]
    if any(b.faults is not None for b in view.boards):
        keys += ["x", "N", "?"]
    blocks = [_swatch(LEGEND_COLOURS[k], words[k]) for k in keys]
    if any(b.faults is not None for b in view.boards):
        blocks.append(_swatch("#1f77b4", "this step's block holds bad elements", "border:3px solid #c0362c"))
    if any(b.outside for b in view.boards):
        blocks.append(_swatch("#fff", "past the array's end", "border:1px dashed #c0362c"))
        blocks.append(_swatch(LEGEND_COLOURS["outside"], "this step's block, " + words["outside"]))
    points = [_swatch("#1f77b4", "this step"), _swatch("#b9c9da", "steps before it"),
              _swatch("#dfe6ee", "steps after it")]
    if view.bad_steps:
        points.append(_swatch("#f2a7a0", "a step that went wrong"))
    return (f"<div class='legend dim'>blocks: {''.join(blocks)}</div>"
            f"<div class='legend dim'>grid points: {''.join(points)}</div>")


def render_page(view: GridView) -> str:
    """The whole page as a string."""
    passed = view.passed
    semantics = f" ({', '.join(view.semantics)})" if view.semantics else ""
    ran = (f"<p class='fail'>{html.escape(sentences.stopped_after(view.ran, view.steps))}</p>"
           if view.ran is not None else "")
    if view.planned:
        ran = f"<p class='planned'>{html.escape(sentences.PLANNED_ONLY)}</p>"
    unseen = (f"<p class='fail'>{html.escape(sentences.NO_STEP_COVERS)}</p>"
              if any(b.faults is not None for b in view.boards) and not view.bad_steps else "")
    operands = "".join(_operand_html(k, b) for k, b in enumerate(view.boards))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{GENERATOR_MARK}
<title>{html.escape(view.title)} · grid view</title><style>{STYLE}</style></head>
<body data-step="0">
<h1>{html.escape(view.title)}</h1>
<div class="dim">shape case {html.escape(view.case)} · kernel {html.escape(view.kernel)} · \
grid {view.grid}{semantics}</div>
<div class="verdict {'pass' if passed else 'fail'}">{html.escape(view.verdict)}</div>{ran}{unseen}
<div class="controls"><input type="range" id="pp-step" min="0" max="{max(0, view.steps - 1)}" value="0">
<button id="pp-first-bad"{'' if view.bad_steps else ' disabled'}>first bad step</button>
<div id="pp-step-label"></div></div>
<div><div class="dim">grid points (click one):</div>{_grid_points_svg(view)}</div>
<div>{operands}</div>{_legend(view)}
<script type="application/json" id="pp-data">{_data(view)}</script>
<script>{SCRIPT}</script>
</body></html>
"""

