"""`--json`: one valid document on stdout, matching the schema shipped in the package."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers import json_schema

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import json_view
from pallas_puzzles.results import (
    BadElement,
    CaseResult,
    CheckResult,
    ElementFault,
    Finding,
    Mismatch,
    SourceLine,
)


def validate(document: dict) -> None:
    jsonschema.validate(document, json_schema())


def test_the_schema_knows_exactly_the_catalogues_kinds():
    assert json_schema()["$defs"]["kind"]["enum"] == [kind.id for kind in FindingKind]


def _mismatch(kind: FindingKind) -> Mismatch:
    got = {FindingKind.MISMATCH_NAN: float("nan"), FindingKind.MISMATCH_GARBAGE: -2.5e38}.get(kind, 1.5)
    fault = {FindingKind.MISMATCH_NAN: ElementFault.NAN, FindingKind.MISMATCH_UNWRITTEN: ElementFault.UNWRITTEN}
    return Mismatch(
        shape=(4, 8), total=32, n_bad=2, n_nan=2 if kind is FindingKind.MISMATCH_NAN else 0,
        n_unwritten=2 if kind is FindingKind.MISMATCH_UNWRITTEN else 0, max_abs_error=float("nan"),
        examples=(BadElement((0, 1), 0.5, got, fault.get(kind, ElementFault.WRONG)),), block_shape=(4, 4),
        block_map=(".x",), rtol=1e-5, atol=1e-5,
    )


@pytest.mark.parametrize("kind", list(FindingKind), ids=lambda k: k.id)
def test_every_kind_of_finding_fits_the_schema(kind):
    line = SourceLine("/ws/exercises/07_long_sum.py", 31, "acc += x_ref[...]", "kernel")
    if kind.is_mismatch:
        mismatch = _mismatch(kind)
        assert mismatch.kind is kind
        case = CaseResult("N=4", False, mismatch=mismatch, sizes={"N": 4})
        result = CheckResult(7, "long_sum", line.file, "interpret", False, cases=[case])
    else:
        finding = Finding(kind, f"a {kind.label}", where=(line,), grid_point=(0, 1), array="x")
        case = CaseResult("N=4", False, findings=(finding,), sizes={"N": 4})
        result = CheckResult(7, "long_sum", line.file, "interpret", False, cases=[case])
    document = json_view.result_document(result)
    validate(document)
    assert document["kind"] == kind.id
    json.dumps(document, allow_nan=False)  # strictly valid JSON: no bare NaN


