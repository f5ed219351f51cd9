"""The notebook API in a real Jupyter kernel: cells define launchers, pp.check and pp.show render.

The kernel is this interpreter's ipykernel; it sees the code under test through
the environment (PYTHONPATH in a source checkout, the installed package in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

SRC = Path(__file__).resolve().parents[2] / "src"

CELLS = [
    # 0: the exercise to start from, no workspace anywhere
    """import pallas_puzzles as pp
ex = pp.exercise(1)
print(pp.__file__)
print(ex.title, "|", "TODO" in ex.stub, "|", len(ex.text) > 100)""",
    # 1: a correct launcher, written in the notebook
    """import jax
from jax.experimental import pallas as pl

def add_ten_kernel(x_ref, z_ref):
    z_ref[...] = x_ref[...] + 10.0

def constant_add(x):
    return pl.pallas_call(add_ten_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

good = pp.check(1, constant_add, backend="auto")
print("passed:", good.passed, len(good.cases), good.findings)
good""",
    # 2: a wrong one: the verdict's HTML carries the mismatch table
    """def add_eleven_kernel(x_ref, z_ref):
    z_ref[...] = x_ref[...] + 11.0

def wrong_add(x):
    return pl.pallas_call(add_eleven_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

bad = pp.check(1, wrong_add)
print("passed:", bad.passed, bad.kind)
bad""",
    # 3: a fault found while the kernel runs names this cell's line
    """B = 128

def global_offset_kernel(x_ref, z_ref):
    z_ref[...] = x_ref[pl.ds(pl.program_id(0) * B, B)] + 10.0

def blocked_add(x):
    return pl.pallas_call(global_offset_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(pl.cdiv(x.shape[0], B),),
                          in_specs=[pl.BlockSpec((B,), lambda i: (i,))],
                          out_specs=pl.BlockSpec((B,), lambda i: (i,)))(x)

oob = pp.check(2, blocked_add)
where = [line for f in oob.findings for line in f.where]
print("kind:", oob.kind, "| line:", where[0].line, "|", where[0].text)
oob""",
    # 4: the grid view embedded in the notebook
    """pp.show(2, blocked_add)""",
    # 5: print and str() give the terminal's text, naming the cell, not the kernel's temp file
    """print(bad)
text = str(bad)
print("STR", len(text) > 100, "Cell In[3]" in text, ".py:" in text)""",
    # 6: the course side of the API: hints one at a time, the list, the solution behind the spoiler rule
    """print(pp.hint(7))
print(pp.hint(7))
print("HELD" if "yes=True" in str(pp.solution(2)) else "SHOWN")
print("OPEN" if "def constant_add" in str(pp.solution(1)) else "HELD")
print("DIR", all(name in dir(pp) for name in ("check", "show", "exercise", "hint", "list", "solution")))
pp.list()""",
    # 7: the exercise's docstring is shown once, as text above the code
    """pp.exercise(1)""",
    # 8: the verdict's parts as data read at a glance, not as dumps of the dataclasses behind them
    """print("CASES", good.cases, bad.cases)
print("FINDINGS", oob.findings)
oob.cases""",
]


def _html(outputs: list[dict]) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in outputs
                   if o.get("output_type") in ("execute_result", "display_data"))


def _stdout(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")


def test_notebook_checks_and_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    # The kernel process inherits the environment; ipykernel's own spec runs this interpreter
    # (jupyter_client puts sys.executable in place of its "python").
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    exercise, good, bad, oob, show, printed, course, markdown, parts = (cell.outputs for cell in notebook.cells)
    # One output per displayed verdict: the HTML, with no second (terminal) panel beside it.
    for outputs in (good, bad, oob):
        displayed = [o for o in outputs if o.get("output_type") in ("execute_result", "display_data")]
        assert len(displayed) == 1 and "text/html" in displayed[0]["data"], displayed

    assert "Constant add | True | True" in _stdout(exercise)
    assert _stdout(exercise).startswith(str(SRC))  # the kernel ran the code under test
    assert "passed: True 3 []" in _stdout(good)
    assert "✓ Puzzle 1: Constant add" in _html(good)

    assert "passed: False mismatch-wrong" in _stdout(bad)
    verdict = _html(bad)
    assert "<table class='pp-mismatch'>" in verdict
    assert "<td>(0,)</td>" in verdict and "pp-block-map" in verdict
    assert "The numbers differ" in verdict  # the explanation travels with it

    assert "kind: oob-read | line: 4 | z_ref[...] = x_ref[pl.ds(pl.program_id(0) * B, B)] + 10.0" in _stdout(oob)
    assert "Cell In[4], line 4" in _html(oob)  # named as IPython names the cell in tracebacks

    text = _stdout(printed)
    assert "STR True True False" in text  # str(result) holds the verdict and names the cell, not 455513095.py
    assert text.count("✗ Puzzle 1: Constant add") == 1 and not _html(printed)

    said = _stdout(course)
    assert "Hint 1/" in said and "Hint 2/" in said and "pp.hint(7) again for hint 3" in said
    assert "HELD" in said and "OPEN" in said and "DIR True" in said
    table = _html(course)
    assert "<table class='pp-list'>" in table and "Long sum" in table
    assert table.count(">solved<") == 1  # puzzle 1 passed pp.check in cell 2

    page = [o["data"]["text/markdown"] for o in markdown if "text/markdown" in o.get("data", {})][0]
    assert page.count("A Pallas kernel never sees whole arrays") == 1 and "def constant_add_kernel" in page

    # text/plain beside the HTML is plain text: no terminal colour codes for nbconvert or an autograder to show.
    for outputs in (good, bad, oob):
        plain = next(o for o in outputs if o.get("output_type") == "execute_result")["data"]["text/plain"]
        assert "\x1b[" not in plain and "Puzzle" in plain, plain

    said = _stdout(parts)
    assert ("CASES [<case N=32: passed>, <case N=7; x scaled by 1000: passed>, <case N=100: passed>] "
            "[<case N=32: failed (mismatch-wrong)>]") in said, said
    assert "FINDINGS [<finding oob-read at line 4: Out-of-bounds read at grid point (1,)" in said, said
    shown = next(o for o in parts if o.get("output_type") == "execute_result")["data"]["text/plain"]
    assert shown.startswith("[<case N=200: failed (oob-read)>") and len(shown) < 200, shown

    frame = _html(show)
    assert frame.startswith("<iframe srcdoc=") and "grid-points" in frame and "pp-data" in frame
    assert "&quot;fault&quot;:1" in frame  # the read past the block happened on grid step 2 of 2


