"""`tpu-lowering`: without a TPU, check that a pallas_call kernel lowers for one.

`jax.jit(f).trace(...).lower(lowering_platforms=("tpu",))` runs Pallas's Mosaic
TPU lowering on the CPU, with its block-shape rules, for an abstract TPU v5e
(engine/targets/pallas_call/explain/lowering.py). Nothing runs; the index_maps are still checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.backends import TPU
from pallas_puzzles.engine.targets.base import Target
from pallas_puzzles.engine.targets.memory import forget_compiled
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult


class TpuLowering(Target):
    name: ClassVar[str] = "tpu-lowering"
    summary: ClassVar[str] = "Mosaic's TPU lowering and block rules, run on this machine's CPU for a TPU v5e"

    def start(self) -> None:
        from pallas_puzzles.engine.targets.pallas_call.intercept import patch

        patch.install()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax

        from pallas_puzzles.engine.targets.pallas_call import case_runner as pallas_case
        from pallas_puzzles.engine.targets.pallas_call import launcher_trace as integrity
        from pallas_puzzles.engine.targets.pallas_call.explain import lowering
        from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation, session_scope

        session = pallas_case.new_session(case)
        session.tpu_block_rules = False  # Mosaic's own lowering applies them here, in its own words
        inputs, expected, _ = case.data()
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
        try:
            with session_scope(session), lowering.target_tpu():
                traced = jax.jit(entry).trace(*shapes)
                outside = integrity.judge_traced(traced.jaxpr, case.puzzle, inputs, expected, session, entry)
                if outside is not None:  # the answer does not come from the kernel: lowering it proves nothing
                    return pallas_case.finish(case, session, False, outside)
                traced.lower(lowering_platforms=(TPU.platform,))
        except StrictViolation as exc:
            return pallas_case.finish(case, session, False, exc.finding)
        except lowering.LoweringUnavailable as exc:
            return pallas_case.finish(case, session, False, Finding(
                FindingKind.INTERNAL, f"The TPU lowering check cannot run here: {exc}."))
        except Exception as exc:
            return pallas_case.finish(case, session, False, lowering.explain(exc, session))
        return pallas_case.finish(case, session, True)

    def between_puzzles(self) -> None:
        forget_compiled()
