"""Random numbers drawn in a kernel: the properties that hold on any hardware, and the hardware PRNG.

The values are checked against the spec's own draws (threefry keys give the same bits in a kernel
and outside it, on any chip), and these properties say what a wrong draw means:
- the share of kept elements is near `keep`, within 5 standard deviations of a binomial;
- every block of `rows` rows keeps its own elements: identical masks in every block mean one key
  (or one seed) served them all;
- another key gives another output: a mask that stays means the numbers do not come from the key
  (checked by running the launcher once more, only where the values are already wrong).
A finding names the line that draws the numbers (recorded while the kernel is traced). The TPU's
own generator (pltpu.prng_seed and friends) is refused where it is called: its numbers differ
from chip to chip, and Pallas's interpreter returns zeros for them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from pallas_puzzles.engine.learner_lines import learner_call_site
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, StrictViolation, active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.tpu_kernel.options import RandomOptions

SAMPLERS = ("bernoulli", "uniform", "bits", "normal", "randint")  # jax.random's, as a kernel calls them
HARDWARE = ("prng_seed", "prng_random_bits", "stateful_bernoulli", "stateful_uniform", "stateful_normal",
            "stateful_bits", "to_pallas_key", "sample_block")  # pltpu's, that use the TPU's generator
SIGMAS = 5.0  # how far the share of kept elements may stray from `keep`
_draws: dict[int, list[SourceLine]] = {}  # id(session) -> the lines that drew random numbers in it


def _drawing(sampler: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(sampler)
    def draw(*args: Any, **kwargs: Any) -> Any:
        session = active.session
        if session is not None:
            line = learner_call_site(session.learner_file)
            if line is not None:
                lines = _draws.setdefault(id(session), [])
                if line not in lines:
                    lines.append(line)
        return sampler(*args, **kwargs)

    return draw


def _refused(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def hardware(*args: Any, **kwargs: Any) -> Any:
        session = active.session
        if session is None or not session.backend.interprets:
            return original(*args, **kwargs)
        line = learner_call_site(session.learner_file)
        raise StrictViolation(Finding(
            FindingKind.HARDWARE_PRNG,
            f"pltpu.{name} draws from the TPU's own random number generator: its numbers differ from chip "
            "to chip, and on a CPU Pallas's interpreter gives zeros for them.",
            where=(line,) if line is not None else ()))

    return hardware


def install() -> None:
    """Note the lines that draw with jax.random, refuse pltpu's hardware generator (idempotent; both act
    only inside a check's session)."""
    import jax
    from jax.experimental.pallas import tpu as pltpu

    if getattr(jax.random, "_pallas_puzzles_draws", False):
        return
    for name in SAMPLERS:
        setattr(jax.random, name, _drawing(getattr(jax.random, name)))
    for name in HARDWARE:
        if hasattr(pltpu, name):
            setattr(pltpu, name, _refused(name, getattr(pltpu, name)))
    jax.random._pallas_puzzles_draws = True  # type: ignore[attr-defined]


def _masks(output: np.ndarray, rows: int) -> np.ndarray:
    """The kept elements (non-zero), one mask per block of `rows` rows."""
    kept = np.asarray(output) != 0
    blocks = kept.shape[0] // rows
    return kept[: blocks * rows].reshape(blocks, rows, *kept.shape[1:])


def judge(opts: RandomOptions, case: Case, entry: Callable[..., Any], session: StrictSession,
          passed: bool) -> Finding | None:
    """The first property the case's output breaks, as a finding naming the draw; None when all hold."""
    got = _output(session)
    if got is None or not np.isfinite(got).all():  # parts never written: the mismatch says it better
        return None
    where = tuple(_draws.pop(id(session), ()))[:1]
    masks = _masks(got, opts.rows)
    rate, n = float(masks.mean()), masks.size
    spread = SIGMAS * math.sqrt(opts.keep * (1 - opts.keep) / n)
    if abs(rate - opts.keep) > spread:
        return Finding(FindingKind.KEEP_RATE,
                       f"The kernel kept {rate:.1%} of the {n} elements; with keep probability {opts.keep:g} about "
                       f"{opts.keep:.0%} survive (this case allows {opts.keep - spread:.1%} to "
                       f"{opts.keep + spread:.1%}).", where=where)
    if len(masks) > 1 and all(np.array_equal(masks[0], m) for m in masks[1:]):
        return Finding(FindingKind.SAME_RANDOM_BLOCKS,
                       f"All {len(masks)} blocks of {opts.rows} rows kept exactly the same elements: the draw at "
                       "this line gave each block the same numbers.", where=where)
    if passed:
        return None
    return _key_ignored(opts, case, entry, session, masks, where)


def _output(session: StrictSession) -> np.ndarray | None:
    record = next((r for r in reversed(session.calls) if r.results), None)
    return np.asarray(record.results[0]) if record is not None else None


def _key_ignored(opts: RandomOptions, case: Case, entry: Callable[..., Any], session: StrictSession,
                 masks: np.ndarray, where: tuple[SourceLine, ...]) -> Finding | None:
    """Run the launcher again with another key: the same mask means the key never reached the draw."""
    from pallas_puzzles.engine.targets.pallas_call import probe

    inputs = list(case.data()[0])
    index = [item.name for item in case.puzzle.inputs].index(opts.key)
    key = inputs[index]
    inputs[index] = (key + 1).astype(key.dtype)  # every word of the key's data changed
    again = probe.rerun(session, entry, tuple(inputs))
    _draws.pop(id(session), None)
    if again is None or not np.array_equal(_masks(again.output, opts.rows), masks):
        return None
    return Finding(FindingKind.KEY_IGNORED,
                   f"With another key ({opts.key} + 1) the kernel kept exactly the same elements: its random "
                   f"numbers do not come from {opts.key}.", where=where)
