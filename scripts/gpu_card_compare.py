"""Measured against estimated: the GPU check's kernel times beside the GPU card, per puzzle and case.

    python scripts/gpu_card_compare.py kernel_times.json perf.json [--chip h100]

kernel_times.json is what scripts/gpu_check.py wrote on a GPU (perf's measured seconds per case);
perf.json is `pallas-puzzles perf --all --solutions --json --chip h100` run where the GPU
interpreter runs (jax 0.12; a CPU will do), whose cases carry the GPU card. Prints a markdown table
with measured / estimated per case, and flags the cases the card is off by more than 25 %.
Imports nothing of the project, so it runs with any Python.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

OFF = 0.25  # the card is mended where it is off by more than this on kernel-bound cases


def estimates(perf: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(puzzle name, case label) -> the case's GPU card, from perf's summary or single-check document."""
    checks = perf.get("checks", [perf])
    return {(check["name"], case["label"]): case["gpu_card"] for check in checks
            for case in check.get("cases", []) if case.get("gpu_card")}


def rows(times: dict[str, Any], cards: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for puzzle in times.get("puzzles", []):
        for case in puzzle["cases"]:
            card = cards.get((puzzle["name"], case["label"]))
            if card is None or case.get("seconds") is None:
                continue
            ratio = case["seconds"] / card["est_seconds"]
            found.append({"puzzle": puzzle["puzzle"], "name": puzzle["name"], "case": case["label"],
                          "measured": case["seconds"], "estimated": card["est_seconds"], "bound": card["bound"],
                          "ratio": ratio, "off": card["bound"] != "launch" and abs(ratio - 1) > OFF})
    return found


def table(found: list[dict[str, Any]], device: str, chip: str) -> str:
    lines = [f"Measured on {device}; estimated by the GPU card for {chip}.", "",
             "| puzzle | case | measured | estimated | bound | measured / estimated |", "|---|---|---|---|---|---|"]
    for r in found:
        flag = " (off by more than 25 %)" if r["off"] else ""
        lines.append(f"| {r['puzzle']} {r['name']} | {r['case']} | {r['measured'] * 1e6:.1f} µs | "
                     f"{r['estimated'] * 1e6:.1f} µs | {r['bound']} | {r['ratio']:.2f}{flag} |")
    if not found:
        lines.append("| — | no case has both a measured time and a GPU card | | | | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_times", type=Path)
    parser.add_argument("perf", type=Path)
    parser.add_argument("--chip", default="h100", help="the GPU the perf document was estimated for")
    args = parser.parse_args()
    times = json.loads(args.kernel_times.read_text(encoding="utf-8"))
    perf = json.loads(args.perf.read_text(encoding="utf-8"))
    print(table(rows(times, estimates(perf)), times.get("device", "?"), args.chip), end="")


if __name__ == "__main__":
    main()
