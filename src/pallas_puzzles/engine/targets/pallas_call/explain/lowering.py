"""Checking, without a TPU, that a kernel lowers for one, and explaining a refusal.

`jax.jit(f).trace(...).lower(lowering_platforms=("tpu",))` runs Pallas's
Mosaic TPU lowering on the CPU, with its block-shape rules. Some rules depend
on the TPU generation, so the lowering targets an abstract TPU v5e. This does
not run Mosaic's final compiler (that lives in libtpu), so a kernel that
lowers here can still, rarely, be rejected on a real TPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from pallas_puzzles.backends import TPU
from pallas_puzzles.engine.learner_lines import learner_frames
from pallas_puzzles.engine.meanings import first_meaning
from pallas_puzzles.engine.targets.pallas_call.explain import writes
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

TARGET_DEVICE_KIND = "TPU v5 lite"

TPU_MEANINGS: tuple[tuple[str, str], ...] = (
    (r"divisible by 8 and 128",
     "On a TPU the last two dimensions of every block must be multiples of 8 and 128 (sublanes and "
     "lanes of a vector register), or equal to the whole array's dimensions. Pick blocks such as "
     "(8, 128) or (16, 256)."),
    (r"rank 1 block shapes",
     "On a TPU a 1-D block must be the whole array, a multiple of 1024, or a power of two of at least 128."),
    (r"buffering are supported|Lookahead is not supported",
     "A pallas_call pipelines each blocked operand with one buffer (pl.Buffered(1)) or two (the default); "
     "more buffers, or a lookahead, only an inner pltpu.emit_pipeline offers."),
    (r"Can only (load|store) scalars",
     "SMEM holds the scalar core's numbers: Mosaic reads and writes it one element at a time. Index "
     "single elements (ref[0], ref[i]) and build any vector from them, e.g. jnp.stack([ref[0], ref[1]]), "
     "or keep the array in VMEM."),
    (r"Unimplemented primitive",
     "This operation has no Mosaic TPU lowering; express it with supported operations (for example a "
     "cumulative sum as a matmul with a triangular matrix)."),
    (r"Not implemented|not supported|Unsupported",
     "Mosaic TPU does not support this construct; the message above names it."),
)


class LoweringUnavailable(Exception):
    """This jax cannot target an abstract TPU: a limit of the set-up, not of the kernel."""


@contextlib.contextmanager
def target_tpu() -> Iterator[None]:
    """Make the lowering believe it targets a TPU v5e (public jax.sharding API, jax >= 0.10)."""
    import jax

    try:
        device = jax.sharding.AbstractDevice(device_kind=TARGET_DEVICE_KIND, num_cores=1, platform=TPU.platform)
        mesh = jax.sharding.AbstractMesh((1,), ("tpu",), abstract_device=device)  # one axis, named for readers
        scope = jax.sharding.use_abstract_mesh(mesh)
    except (AttributeError, TypeError) as exc:
        raise LoweringUnavailable(
            f"jax {jax.__version__} cannot target an abstract TPU here ({type(exc).__name__}: {exc})"
        ) from exc
    with scope:
        yield


def meaning(text: str) -> str:
    """The plain-language meaning of a Mosaic refusal, from its text ("" when none is known)."""
    return first_meaning(TPU_MEANINGS, text)


def whole_sentences(text: str, limit: int = 600) -> str:
    """Mosaic's message, cut (if at all) after a sentence, never inside one."""
    if len(text) <= limit:
        return text
    end = text.rfind(". ", 0, limit)
    return text[: end + 1] + " (…)" if end > 0 else text[:limit] + "…"


def explain(exc: BaseException, session: StrictSession) -> Finding:
    text = str(exc)
    returning = writes.returned(text, session.calls)  # no rule of Mosaic's: the learner's own line
    if returning is not None:
        return returning
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    where = learner_frames(exc, session.learner_file)
    if not where and session.calls and session.calls[-1].call_line is not None:
        where = (session.calls[-1].call_line,)
    return Finding(
        FindingKind.TPU_LOWERING,
        f"This kernel would not compile for a TPU: {whole_sentences(first)}",
        explanation=meaning(text),
        where=where,
        detail=text,
    )
