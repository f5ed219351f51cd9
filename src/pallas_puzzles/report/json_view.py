"""The JSON view: one document on stdout for scripts, autograders and CI.

The schema is documented in the README ("Machine-readable output") and checked
by tests/e2e/test_json.py against `check.schema.json` beside this file. Floats that
JSON cannot hold (NaN, infinities) are written as the strings "NaN", "inf", "-inf".
"""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING, Any

from pallas_puzzles import backends
from pallas_puzzles.perf.figures import Performance
from pallas_puzzles.report.formats import Format
from pallas_puzzles.report.perf_card import card_case
from pallas_puzzles.report.traffic_card import traffic_case
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch, Status

if TYPE_CHECKING:
    from pallas_puzzles.checking.jobs import RunReport
    from pallas_puzzles.dev.check import CourseCheck
    from pallas_puzzles.engine.targets.tpu_multichip.traffic import RingTraffic
    from pallas_puzzles.workspace.progress import Progress

SCHEMA_VERSION = 1


def _number(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def finding_dict(finding: Finding) -> dict[str, Any]:
    first = finding.where[0] if finding.where else None
    return {
        "kind": finding.kind.id,
        "message": finding.message,
        "explanation": finding.explanation,
        "file": first.file if first else None,
        "line": first.line if first else None,
        "grid_point": list(finding.grid_point) if finding.grid_point is not None else None,
        "array": finding.array,
        "where": [{"file": w.file, "line": w.line, "text": w.text} for w in finding.where],
        "device": finding.device,
        "devices": finding.devices,
    }


def mismatch_dict(m: Mismatch) -> dict[str, Any]:
    return {
        "kind": m.kind.id,
        "explanation": m.kind.explanation,
        "shape": list(m.shape),
        "elements": m.total,
        "wrong": m.n_bad,
        "nan": m.n_nan,
        "never_written": m.n_unwritten,
        "max_abs_error": _number(m.max_abs_error),
        "rtol": m.rtol,
        "atol": m.atol,
        "examples": [{"index": list(e.index), "expected": _number(e.expected), "got": _number(e.got),
                      "fault": e.fault.value} for e in m.examples],
        "block_shape": list(m.block_shape),
        "block_map": list(m.block_map),
        "grid_points": [list(point) for point in m.grid_points],
        "more_grid_points": m.more_grid_points,
        "stored_at": [{"file": w.file, "line": w.line, "text": w.text} for w in m.stored_at],
    }


def performance_dict(perf: Performance | None) -> dict[str, Any] | None:
    if perf is None:
        return None
    operands = [{"call": n, "name": op.name, "role": op.role, "shape": list(op.shape), "dtype": op.dtype,
                 "hbm_bytes": op.hbm_bytes, "min_bytes": op.min_bytes, "ratio": op.ratio,
                 "vmem_bytes": op.vmem_bytes, "note": op.note}
                for n, call in enumerate(perf.calls, start=1) for op in call.operands]
    return {
        "case": perf.case, "chip": perf.chip, "generation": perf.generation or f"a TPU {perf.chip}",
        "hbm_bytes_read": perf.hbm_bytes_read, "hbm_bytes_written": perf.hbm_bytes_written,
        "hbm_bytes_min": perf.hbm_bytes_min, "flops": perf.flops,
        "arithmetic_intensity": perf.arithmetic_intensity,
        "vmem_bytes": perf.vmem_bytes, "vmem_limit_bytes": perf.vmem_limit_bytes,
        "grid_steps": perf.grid_steps, "est_seconds": perf.est_seconds, "bound": perf.bound,
        "calls": [{"kernel": c.kernel, "grid": list(c.grid), "grid_steps": c.grid_steps,
                   "hbm_bytes_read": c.hbm_bytes_read, "hbm_bytes_written": c.hbm_bytes_written,
                   "vmem_bytes": c.vmem_bytes} for c in perf.calls],
        "operands": operands, "waste": perf.waste or None,
        "launcher": [{"line": {"file": s.line.file, "line": s.line.line, "text": s.line.text} if s.line else None,
                      "hbm_bytes_read": s.read_bytes, "hbm_bytes_written": s.written_bytes,
                      "reads": list(s.reads), "writes": list(s.writes)}
                     for s in (perf.launcher.steps if perf.launcher is not None else ())],
    }


def traffic_dict(traffic: RingTraffic | None) -> dict[str, Any] | None:
    if traffic is None:
        return None
    return {"collective": traffic.collective, "devices": traffic.devices, "input_bytes": traffic.input_bytes,
            "sent": list(traffic.sent), "received": list(traffic.received), "minimum": traffic.minimum,
            "ratio": round(traffic.ratio, 4)}


def case_dict(case: CaseResult) -> dict[str, Any]:
    return {
        "label": case.label,
        "sizes": dict(case.sizes),
        "status": (Status.PASS if case.passed else Status.FAIL).value,
        "seconds": round(case.seconds, 4),
        "findings": [finding_dict(f) for f in case.findings],
        "mismatch": mismatch_dict(case.mismatch) if case.mismatch is not None else None,
        "performance": performance_dict(case.performance),
        "devices": case.devices,
        "traffic": traffic_dict(case.traffic),
        "measured_seconds": case.measured_seconds,
    }


def result_document(result: CheckResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "puzzle": result.number,
        "name": result.name,
        "file": result.file,
        "status": result.status.value,
        "backend": result.backend,
        "mode": result.mode,
        "seconds": round(result.seconds, 4),
        "kind": result.kind.id if result.kind is not None else None,
        "findings": [finding_dict(f) for f in result.findings],
        "cases": [case_dict(c) for c in result.cases],
        "cases_not_run": result.skipped_cases,
        "printed": result.printed,
        "performance": performance_dict(card_case(result)) if result.numbers_right else None,
        "traffic": traffic_dict(traffic_case(result)) if result.passed else None,
    }


def summary_document(results: list[CheckResult], skipped: list[int]) -> dict[str, Any]:
    errors = [r for r in results if r.status is Status.ERROR]  # the checker failed: neither a pass nor a fail
    failed = [r for r in results if r.status is Status.FAIL]
    waiting = [r for r in failed if r.not_started]  # untouched stubs: counted apart from failures
    status = Status.ERROR if errors else Status.FAIL if failed else Status.PASS
    return {
        "schema": SCHEMA_VERSION,
        "status": status.value,
        "passed": len(results) - len(failed) - len(errors),
        "failed": len(failed) - len(waiting),
        "not_started": len(waiting),
        "errors": len(errors),
        "skipped": skipped,
        "checks": [result_document(r) for r in results],
    }


def list_document(progress: Progress) -> dict[str, Any]:
    puzzles = []
    for puzzle in progress.course.puzzles:
        status = "tour" if puzzle.tour else "solved" if progress.is_solved(puzzle) else "unsolved"
        puzzles.append({
            "puzzle": puzzle.number,
            "name": puzzle.name,
            "chapter": puzzle.chapter,
            "title": puzzle.title,
            "file": puzzle.file,
            "status": status,
            "current": puzzle == progress.current,
            "backends": [b for b in backends.REGISTRY if puzzle.supports(backends.get(b))],
            "hints": len(puzzle.hints),
            "hints_seen": progress.hints_seen(puzzle),
        })
    return {
        "schema": SCHEMA_VERSION,
        "course": progress.course.title,
        "course_name": progress.course.name,
        "course_version": progress.course.version,
        "chapters": [{"name": c.name, "number": c.number, "title": c.title, "intro": c.intro, "target": c.target}
                     for c in progress.course.chapters],
        "current": progress.current.number,
        "solved": progress.solved_count,
        "total": progress.total,
        "puzzles": puzzles,
    }


def error_document(message: str) -> dict[str, Any]:
    return {"schema": SCHEMA_VERSION, "status": Status.ERROR.value, "error": message}


def emit(document: dict[str, Any]) -> None:
    sys.stdout.write(text(document))
    sys.stdout.flush()


def text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


class JsonFormat(Format):
    """One JSON document on stdout once the run is over (the schema in check.schema.json)."""

    name = "json"
    document = True

    def run(self, report: RunReport) -> str:
        if report.many:
            return text(summary_document(report.results, [o.puzzle.number for o in report.refused]))
        return text(result_document(report.results[0]))

    def listing(self, progress: Progress) -> str:
        return text(list_document(progress))

    def course_check(self, check: CourseCheck) -> str:
        from pallas_puzzles.report import dev_view

        return text(dev_view.document(check))

    def error(self, message: str) -> str:
        return text(error_document(message))
