"""The GPU check's summary (summary.md) and kernel times (kernel_times.json), from its results.json.

Reads only the documents the project's commands printed (`verify --json`, `dev check --json`,
`perf --json`) and what scripts/gpu_check.py recorded; imports nothing of the project, so it runs
with any Python. The interpreter's verdicts come from the same run, or, where this jax could not
run the interpreter, from a dry run's results.json carried along ("reference").
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

AGREE, BOTH_FAIL, DISAGREE, CHECKER_ERROR, NO_INTERPRETER = "agree", "both fail", "DISAGREE", "checker error", "n/a"
# The interpreter fails a mistake that the hardware may run right (dev check's verdict says why: a race
# the GPU usually wins, as mistakes.toml's `hardware` declares, or a budget only the interpreter counts).
HIDDEN = "passes on the hardware, as expected"


@dataclass(frozen=True)
class Verdict:
    status: str  # pass, fail, error
    kind: str | None = None
    hardware: str | None = None  # a mistake the hardware may run right: why (dev check's verdict says)

    def text(self) -> str:
        return self.status if self.status == "pass" or not self.kind else f"{self.status} ({self.kind})"


def agreement(interpreted: Verdict | None, device: Verdict) -> str:
    """How the device's verdict of one kernel compares with the interpreter's."""
    if "error" in (device.status, interpreted.status if interpreted else None):
        return CHECKER_ERROR
    if interpreted is None:
        return NO_INTERPRETER
    if interpreted.status == "fail" and device.status == "pass" and device.hardware:
        return HIDDEN
    if interpreted.status != device.status:
        return DISAGREE
    return AGREE if interpreted.status == "pass" or interpreted.kind == device.kind else BOTH_FAIL


def _verdict(document: dict[str, Any]) -> Verdict:
    return Verdict(document.get("status", "error"), document.get("kind"), document.get("hardware"))


def _short(sentence: str) -> str:
    """A refusal in a few words: "needs jax 0.12 on the interpret backend"."""
    words = sentence.split()
    if "needs" in words:
        start = words.index("needs")
        end = next((i for i, w in enumerate(words[start:], start) if w.startswith("(")), len(words))
        return " ".join(words[start:end]).rstrip(";,.")
    return sentence.rstrip(".")


def _largest(cases: list[dict[str, Any]]) -> dict[str, Any] | None:
    timed = [c for c in cases if c.get("measured_seconds") is not None]
    return max(timed, key=lambda c: math.prod(c.get("sizes", {}).values() or [1]), default=None)


def _micro(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:.1f} µs"


class Summary:
    def __init__(self, results: dict[str, Any], reference: dict[str, Any] | None) -> None:
        self.results, self.reference = results, reference
        self.backend = results["backend"]
        self.dry_run = results["dry_run"]
        self.puzzles = results["course"]["puzzles"]
        self.on_gpu = {p["name"] for p in self.puzzles if "gpu" in p["backends"]}
        self.checks = self._checks(results.get("verify", []))
        self.timings = self._checks(results.get("perf", []))
        docs = results.get("dev_check", [])
        self.problems = [p for d in docs for p in d.get("problems", [])]
        self.skipped = {(s["puzzle"], s["message"]) for d in docs for s in d.get("skipped", [])}
        self.kernels = self._kernels([v for d in docs for v in d.get("verdicts", [])])
        ref_docs = (reference or {}).get("dev_check", [])
        self.carried = self._kernels([v for d in ref_docs for v in d.get("verdicts", [])])

    @staticmethod
    def _checks(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """verify's or perf's check documents by puzzle name (a refusal's error document as well)."""
        found: dict[str, dict[str, Any]] = {}
        for document in documents:
            for check in document.get("checks", [document]):
                if "name" in check:
                    found[check["name"]] = check
        return found

    def _kernels(self, verdicts: list[dict[str, Any]]) -> dict[tuple[str, str, str | None, str], Verdict]:
        """dev check's verdicts by (puzzle, subject, example, "interpret" or "device"). A dry run's device is
        the interpreter itself, for the puzzles a GPU run would run there."""
        found = {}
        for v in verdicts:
            # A lowering, or the interpreter on a GPU's or TPU's cases (dev check's "hardware cases"):
            # neither is a kernel run on the device nor the interpreter's verdict to compare with.
            if v.get("mode", "run") != "run" or v.get("cases", v["backend"]) != v["backend"]:
                continue
            key = (v["puzzle"], v["subject"], v["example"])
            if v["backend"] == "interpret":
                found[(*key, "interpret")] = _verdict(v)
            if v["backend"] == self.backend and (not self.dry_run or v["puzzle"] in self.on_gpu):
                found[(*key, "device")] = _verdict(v)
        return found

    def interpreted(self, puzzle: str, subject: str, example: str | None) -> Verdict | None:
        key = (puzzle, subject, example, "interpret")
        return self.kernels.get(key) or self.carried.get(key)

    def _why_not(self, puzzle: dict[str, Any], backend: str) -> str:
        """Why there is no verdict on `backend`: the refusal's words, else what the puzzle runs on."""
        for name, message in sorted(self.skipped):
            about = "interpret" if "interpret backend" in message else "" if "backend" not in message else "other"
            if name == puzzle["name"] and about in ("", "interpret" if backend == "interpret" else "other"):
                return _short(message)
        check = self.checks.get(puzzle["name"], {})
        if backend == self.backend and "error" in check:
            return _short(check["error"])
        if backend != "interpret" and backend not in puzzle["backends"]:
            return f"runs on {', '.join(puzzle['backends'])}"
        return "not run"

    def comparisons(self) -> list[tuple[dict[str, Any], str, str | None, Verdict | None, Verdict]]:
        """Every kernel the device ran, with the interpreter's verdict of it: (puzzle, subject, example, ...)."""
        rows = []
        for puzzle in self.puzzles:
            for (name, subject, example, backend), device in self.kernels.items():
                if name == puzzle["name"] and backend == "device":
                    rows.append((puzzle, subject, example, self.interpreted(name, subject, example), device))
        return rows

    def _device_solution(self, puzzle: dict[str, Any]) -> Verdict | None:
        check = self.checks.get(puzzle["name"])
        return _verdict(check) if check and "error" not in check else None

    def disagreements(self) -> list[str]:
        found = []
        for puzzle, subject, example, interpreted, device in self.comparisons():
            if agreement(interpreted, device) in (DISAGREE, CHECKER_ERROR):
                what = example or subject
                theirs = interpreted.text() if interpreted else "n/a"
                found.append(f"{puzzle['puzzle']} {puzzle['name']}: {what}: interpreter {theirs}, "
                             f"{self.backend} {device.text()}")
        for puzzle in self.puzzles:
            device = self._device_solution(puzzle)
            interpreted = self.interpreted(puzzle["name"], "solution", None)
            if device is not None and agreement(interpreted, device) in (DISAGREE, CHECKER_ERROR):
                found.append(f"{puzzle['puzzle']} {puzzle['name']}: verify --solutions: interpreter "
                             f"{interpreted.text() if interpreted else 'n/a'}, {self.backend} {device.text()}")
        return found

    def hang_line(self) -> tuple[str, bool]:
        hang = self.results.get("hang") or {}
        if "note" in hang or not hang:
            return hang.get("note", "not run"), False
        stopped, after = hang.get("stopped") or {}, hang.get("next") or {}
        ok = stopped.get("kind") == "timeout" and after.get("status") == "pass"
        return (f"a kernel that never ends (time limit {hang['limit']} s): {_verdict(stopped).text()} after "
                f"{hang['stopped_seconds']} s (the command, a fresh checker started included); the next check: "
                f"{_verdict(after).text()} in {hang['next_seconds']} s", ok)

    def steps_ok(self) -> bool:
        return all(not s["timed_out"] and s["exit"] == s["expected"] for s in self.results["steps"])

    @property
    def clean(self) -> bool:
        return ("stopped" not in self.results and not self.disagreements() and not self.problems
                and self.steps_ok() and self.hang_line()[1]
                and all(c.get("status") == "pass" for c in self.checks.values() if "error" not in c))

    def headline(self) -> str:
        where = "dry run on the CPU (interpret)" if self.dry_run else self._device()
        found = len(self.disagreements())
        return (f"GPU check, {where}: {len(self.puzzles)} puzzles in {self.results['seconds']} s; "
                f"{found} disagreement{'s' if found != 1 else ''}, {len(self.problems)} dev check problem"
                f"{'s' if len(self.problems) != 1 else ''}; "
                f"{'all steps ran' if self.steps_ok() else 'a step failed or ran out of time'}.")

    def _device(self) -> str:
        gpus = self.results.get("environment", {}).get("gpus") or ["no GPU"]
        return f"{gpus[0]}" + (f" (x{len(gpus)})" if len(gpus) > 1 else "")

    def _examples_cell(self, puzzle: dict[str, Any]) -> str:
        tally = Counter(agreement(i, d) for p, _, example, i, d in self.comparisons()
                        if p is puzzle and example is not None)
        return ", ".join(f"{n} {what}" for what, n in sorted(tally.items())) or "—"

    def _row(self, puzzle: dict[str, Any]) -> str:
        name = puzzle["name"]
        interpreted = self.interpreted(name, "solution", None)
        device = self._device_solution(puzzle)
        stub_i, stub_d = self.interpreted(name, "stub", None), self.kernels.get((name, "stub", None, "device"))
        stubs = " / ".join(v.text() if v else "—" for v in (stub_i, stub_d))
        timing = _largest(self.timings.get(name, {}).get("cases", []))
        cells = [str(puzzle["puzzle"]), name,
                 interpreted.text() if interpreted else f"n/a ({self._why_not(puzzle, 'interpret')})",
                 device.text() if device else f"n/a ({self._why_not(puzzle, self.backend)})",
                 stubs, self._examples_cell(puzzle),
                 _micro(timing["measured_seconds"]) + f" ({timing['label']})" if timing else "—"]
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"

    def markdown(self) -> str:
        env = self.results.get("environment", {})
        ref = self.reference or {}
        title = "dry run on the CPU (--backend interpret)" if self.dry_run else f"on {self._device()}"
        b = "dry run (interpret)" if self.dry_run else self.backend
        lines = [f"# GPU check, {title}", "",
                 f"- {self.headline()}",
                 f"- Started {self.results['started']}; budget {self.results['budget']:.0f} s. "
                 f"Python {env.get('python')}, jax {env.get('jax')}, jaxlib {env.get('jaxlib')}, CUDA plugins: "
                 f"{', '.join(env.get('cuda_plugins', [])) or 'none'}; devices: {', '.join(env.get('devices', []))}.",
                 "- Interpreter verdicts: this run's" + (
                     f", and where this jax cannot run the interpreter, the dry run of {ref.get('started')} "
                     f"(jax {ref.get('environment', {}).get('jax')})" if self.reference else "") + ".",
                 f"- Hanging kernel: {self.hang_line()[0]}.",
                 *([f"- {self.results['stopped']}"] if "stopped" in self.results else []), ""]
        found = self.disagreements()
        lines += ["## Disagreements and checker errors", ""]
        lines += [f"- {line}" for line in found] or ["- none"]
        lines += ["", "A disagreement is a finding about the checker: fix the checker or the puzzle.", ""]
        hidden = [(p, example, d) for p, _, example, i, d in self.comparisons() if agreement(i, d) == HIDDEN]
        if hidden:
            lines += ["## Mistakes the hardware ran right, as expected", ""]
            lines += [f"- {p['puzzle']} {p['name']}: {example}: {d.hardware}" for p, example, d in hidden] + [""]
        if self.problems:
            lines += ["## dev check's problems", ""]
            lines += [f"- {p['puzzle']}: {p['subject']}: {p['message']}" for p in self.problems] + [""]
        lines += ["## Puzzles", "",
                  f"| # | puzzle | interpreter | {b} | stub: interpreter / {b} | examples on {b} | kernel time |",
                  "|---|---|---|---|---|---|---|"]
        lines += [self._row(p) for p in self.puzzles]
        lines += ["", "Kernel time: perf's median of compiled calls on the device, for its largest shape case "
                      "(— where nothing was measured: the interpreter measures nothing).", "",
                  f"## Wrong kernels and correct alternatives on {b}", "",
                  f"| puzzle | example | interpreter | {b} | agreement |", "|---|---|---|---|---|"]
        lines += [f"| {p['puzzle']} {p['name']} | {example} | {i.text() if i else 'n/a'} | {d.text()} | "
                  f"{agreement(i, d)} |" for p, _, example, i, d in self.comparisons() if example is not None] \
            or ["| — | — | — | — | — |"]
        lines += ["", "## Skipped", ""]
        order = {p["name"]: n for n, p in enumerate(self.puzzles)}
        skipped = sorted(self.skipped, key=lambda s: (order.get(s[0], 0), s))
        lines += [f"- {name}: {message}" for name, message in skipped] or ["- none"]
        lines += ["", "## Steps", "", "| step | exit (expected) | seconds | note |", "|---|---|---|---|"]
        lines += [f"| {s['name']} | {s['exit']} ({s['expected']}) | {s['seconds']} | {s['note']} |"
                  for s in self.results["steps"]]
        return "\n".join(lines) + "\n"

    def kernel_times(self) -> dict[str, Any]:
        env = self.results.get("environment", {})
        return {
            "schema": 1, "backend": self.backend,
            "device": "none: a dry run on the CPU measures nothing" if self.dry_run else self._device(),
            "jax": env.get("jax"), "jaxlib": env.get("jaxlib"), "started": self.results["started"],
            "what": "perf --json's measured_seconds: the median wall time of one compiled call of the reference "
                    "launcher on the device, inputs already there (docs/output-formats.md)",
            "puzzles": [{"puzzle": p["puzzle"], "name": p["name"],
                         "cases": [{"label": c["label"], "sizes": c["sizes"], "seconds": c.get("measured_seconds")}
                                   for c in self.timings.get(p["name"], {}).get("cases", [])]}
                        for p in self.puzzles if self.timings.get(p["name"], {}).get("cases")],
        }
