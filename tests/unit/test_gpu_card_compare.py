"""scripts/gpu_card_compare.py: the GPU check's measured kernel times beside the GPU card's estimates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_card_compare.py"
_spec = importlib.util.spec_from_file_location("gpu_card_compare", SCRIPT)
assert _spec is not None and _spec.loader is not None
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _card(est: float, bound: str) -> dict:
    return {"est_seconds": est, "bound": bound}


def test_measured_over_estimated_per_case_flags_kernel_bound_cases_off_by_more_than_a_quarter():
    perf = {"checks": [{"name": "pipeline_matmul", "cases": [
        {"label": "M=128", "gpu_card": _card(10e-6, "memory")},
        {"label": "M=64", "gpu_card": _card(4e-6, "launch")},
        {"label": "M=32", "gpu_card": None}]}]}
    times = {"device": "NVIDIA H100 80GB HBM3", "puzzles": [{"puzzle": 41, "name": "pipeline_matmul", "cases": [
        {"label": "M=128", "seconds": 14e-6}, {"label": "M=64", "seconds": 9e-6}, {"label": "M=32", "seconds": 1e-6},
        {"label": "M=16", "seconds": None}]}]}
    found = compare.rows(times, compare.estimates(perf))
    assert [(r["case"], round(r["ratio"], 2), r["off"]) for r in found] == [("M=128", 1.4, True), ("M=64", 2.25, False)]
    text = compare.table(found, times["device"], "h100")
    assert "| 41 pipeline_matmul | M=128 | 14.0 µs | 10.0 µs | memory | 1.40 (off by more than 25 %) |" in text
    assert "| 41 pipeline_matmul | M=64 | 9.0 µs | 4.0 µs | launch | 2.25 |" in text  # launch-bound: not flagged
    assert text.startswith("Measured on NVIDIA H100 80GB HBM3; estimated by the GPU card for h100.")


def test_a_single_check_document_and_nothing_to_compare():
    single = {"name": "wgmma_matmul", "cases": [{"label": "M=128", "gpu_card": _card(5e-6, "compute")}]}
    assert compare.estimates(single) == {("wgmma_matmul", "M=128"): _card(5e-6, "compute")}
    assert "no case has both a measured time and a GPU card" in compare.table([], "?", "h100")
