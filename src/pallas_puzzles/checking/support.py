"""The one answer to "can this puzzle run here?": the jax installed, the puzzle's target, the backend and mode.

Every command, watch mode and the notebook API ask `refusal`; none decides for itself.
It needs no JAX (the installed version comes from package metadata), so the CLI can
answer before a checker starts, and the checker asks the same question again.

The jax a check needs is the puzzle's own `min_jax` and that of the target that runs it on
the backend asked for: a chapter may run compiled on an older jax than its interpreter needs
(the Mosaic GPU chapter: compiled on jax 0.11, interpreted from 0.12). Before the backend is
known, a puzzle is refused only when no backend it declares could run it on this jax.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas_puzzles import backends, versions
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind


@dataclass(frozen=True)
class Refusal:
    kind: FindingKind  # JAX_TOO_OLD or UNSUPPORTED
    sentence: str  # one sentence for the learner: what is missing and what to do
    # The same said of several puzzles at once, after their numbers ("Skipped: puzzles 37–43 REASON."),
    # so that puzzles refused for one reason are named together; "" for one only ever said alone.
    reason: str = ""


def _newest(*wanted: str) -> str:
    present = [v for v in wanted if v]
    return max(present, key=versions.parse) if present else ""


def _target_jax(puzzle: Puzzle, backend: Backend, mode: Mode) -> str:
    """The oldest jax the target that runs `puzzle` on `backend` in `mode` supports ("" : any)."""
    from pallas_puzzles.engine import targets

    name = targets.partner_name(puzzle.target, backend, mode)
    return targets.get(name if name is not None else puzzle.target).min_jax


def _needed_jax(puzzle: Puzzle, backend: Backend | None, mode: Mode) -> str:
    if backend is not None:
        return _newest(puzzle.min_jax, _target_jax(puzzle, backend, mode))
    declared = [backends.get(name) for name in puzzle.backends if name in backends.REGISTRY] or [backends.INTERPRET]
    least = min((_target_jax(puzzle, b, mode) for b in declared), key=versions.parse)
    return _newest(puzzle.min_jax, least)


def jax_needed(puzzle: Puzzle) -> dict[str, str]:
    """The oldest jax each backend the puzzle declares needs to check it ("" : any), by backend name."""
    declared = [name for name in puzzle.backends if name in backends.REGISTRY]
    return {name: _needed_jax(puzzle, backends.get(name), Mode.RUN) for name in declared}


def _runs_elsewhere(puzzle: Puzzle, backend: Backend, mode: Mode, have_jax: str | None) -> list[str]:
    """The other backends the puzzle declares whose target this jax is new enough for."""
    return [name for name in puzzle.backends if name != backend.name and name in backends.REGISTRY
            and not versions.too_old(_needed_jax(puzzle, backends.get(name), mode), have_jax)]


def _too_old(puzzle: Puzzle, backend: Backend | None, mode: Mode, have_jax: str | None) -> Refusal | None:
    needed = _needed_jax(puzzle, backend, mode)
    if not versions.too_old(needed, have_jax):
        return None
    on = also = ""
    if backend is not None and needed != _needed_jax(puzzle, None, mode):
        # Only the target of this backend needs the newer jax: say so, and where it runs with this one.
        elsewhere = _runs_elsewhere(puzzle, backend, mode, have_jax)
        on = f"on the {backend.name} backend"
        also = f", though --backend {' or '.join(elsewhere)} runs it with this jax" if elsewhere else ""
    wanted = versions.needed_and_found(needed, have_jax, on) + also
    return Refusal(FindingKind.JAX_TOO_OLD, f"Puzzle {puzzle.number} needs {wanted}.", f"need {wanted}")


def refusal(puzzle: Puzzle, backend: Backend | None, mode: Mode = Mode.RUN,
            have_jax: str | None = None) -> Refusal | None:
    """Why `puzzle` cannot be checked here (None: it can). `backend` None: not known yet, so only
    the jax version is asked about."""
    from pallas_puzzles.engine import targets

    too_old = _too_old(puzzle, backend, mode, have_jax)
    if too_old is not None:
        return too_old
    if backend is None:
        return None
    if mode is Mode.LOWER:
        if targets.partner_name(puzzle.target, backend, mode) is None:
            because = targets.get(puzzle.target).not_lowered_because
            return Refusal(FindingKind.UNSUPPORTED,
                           f"`lower` cannot check puzzle {puzzle.number}: {because}; "
                           f"check it with `pallas-puzzles verify {puzzle.number}`.",
                           f"cannot be checked by `lower` ({because}); `pallas-puzzles verify` checks them")
        return None
    if not puzzle.supports(backend) or targets.partner_name(puzzle.target, backend, mode) is None:
        because = targets.get(puzzle.target).not_run_because.get(backend.name)
        if because:
            return Refusal(FindingKind.UNSUPPORTED, f"Puzzle {puzzle.number} cannot run on the {backend.name} "
                                                    f"backend: {because}; it runs on: {', '.join(puzzle.backends)}.")
        idiom = f" ({puzzle.tpu_only_idiom})" if puzzle.tpu_only_idiom else ""
        return Refusal(FindingKind.UNSUPPORTED,
                       f"Puzzle {puzzle.number} uses an idiom{idiom} that the {backend.name} backend does not run; "
                       f"it runs on: {', '.join(puzzle.backends)}.",
                       f"use an idiom{idiom} that the {backend.name} backend does not run; they run on: "
                       f"{', '.join(puzzle.backends)}")
    return None


def require(puzzle: Puzzle, backend: Backend | None, mode: Mode = Mode.RUN) -> None:
    """Refuse, in one sentence and exit 2, a puzzle that cannot be checked here."""
    found = refusal(puzzle, backend, mode)
    if found is not None:
        raise UserError(found.sentence)


def beyond_this_jax(puzzles: tuple[Puzzle, ...] | list[Puzzle], have_jax: str | None = None) -> dict[str, list[Puzzle]]:
    """The puzzles no backend can check with this environment's jax, by the jax they need (from the course's
    and the targets' min_jax) where the interpreter runs them, which is what a laptop needs, e.g. {"0.12":
    [puzzles 37 to 43]} on Python 3.11, though a GPU compiles them with jax 0.11."""
    found: dict[str, list[Puzzle]] = {}
    for puzzle in puzzles:
        least = _needed_jax(puzzle, None, Mode.RUN)
        if versions.too_old(least, have_jax):
            found.setdefault(jax_needed(puzzle).get(backends.INTERPRET.name) or least, []).append(puzzle)
    return found


def grouped(refusals: list[tuple[Puzzle, Refusal]]) -> list[str]:
    """One sentence per reason, naming every puzzle refused for it: "Skipped: puzzles 37–43 need jax
    0.12 or newer (...)."; a puzzle refused alone keeps its own sentence."""
    from pallas_puzzles.report.sentences import puzzle_numbers

    by_reason: dict[str, list[tuple[Puzzle, Refusal]]] = {}
    for puzzle, refusal in refusals:
        by_reason.setdefault(refusal.reason or refusal.sentence, []).append((puzzle, refusal))
    return [f"Skipped: {puzzle_numbers([p.number for p, _ in group])} {reason}." if len(group) > 1
            else f"Skipped: {group[0][1].sentence}" for reason, group in by_reason.items()]
