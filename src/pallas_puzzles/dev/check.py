"""`dev check`: is a course folder whole and right? The files and keys first, then every kernel it ships.

Every stub must fail (it loads and runs, then is wrong), every solution must pass on the
interpreter and lower for a TPU where the puzzle declares one, every listed mistake must fail with
its declared finding kind and name its line, every listed correct alternative must pass. The
kernels run in parallel on pools of checkers (one pool per target and mode at a time), as
`verify --all` does. A puzzle this jax is too old for is skipped, not a problem.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Mode
from pallas_puzzles.checking import support
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.course.reader import COURSE_FILE, load_course
from pallas_puzzles.dev import examples, static
from pallas_puzzles.dev.static import Problem
from pallas_puzzles.errors import UserError
from pallas_puzzles.report.headline import first_finding, headline
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Status

STUB, SOLUTION, LOWERING, MISTAKE, CORRECT = "stub", "solution", "lowering", "mistake", "correct"


@dataclass(frozen=True)
class Job:
    subject: str  # one of the five above
    puzzle: Puzzle
    file: Path
    mode: Mode = Mode.RUN
    requested: str = backends.INTERPRET.name
    example: examples.Example | None = None

    @property
    def name(self) -> str:
        """How a problem names what was checked: "stub", "solution on gpu", a mistake's name."""
        if self.example is not None:
            return self.example.name
        return f"{self.subject} on {self.requested}" if self.requested != backends.INTERPRET.name else self.subject


@dataclass
class CourseCheck:
    folder: Path
    course: Course | None = None
    problems: list[Problem] = field(default_factory=list)
    checked: list[tuple[Job, CheckResult]] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)  # not problems: puzzles this jax cannot run

    @property
    def passed(self) -> bool:
        return not self.problems


def _jobs(course: Course, usable: list[examples.Example], problems: list[Problem], scratch: Path,
          accelerator: str | None) -> tuple[list[Job], list[Problem]]:
    jobs: list[Job] = []
    skipped: list[Problem] = []
    for puzzle in course.puzzles:
        # A file that is missing or not Python, a spec or target that cannot load: already a problem.
        broken = {p.subject for p in problems if p.puzzle == puzzle.name and p.blocking}
        if broken & {"spec", "target"}:
            continue
        refusal = support.refusal(puzzle, None)
        if refusal is not None:
            skipped.append(Problem(puzzle.name, "skipped", refusal.sentence))
            continue
        if STUB not in broken and not puzzle.tour:
            jobs.append(Job(STUB, puzzle, puzzle.stub_path))
        if SOLUTION in broken:
            continue
        jobs.append(Job(SOLUTION, puzzle, puzzle.solution_path))
        if puzzle.supports(backends.TPU) and support.refusal(puzzle, backends.TPU, Mode.LOWER) is None:
            jobs.append(Job(LOWERING, puzzle, puzzle.solution_path, Mode.LOWER, backends.TPU.name))
        if accelerator is not None and accelerator in puzzle.backends:
            jobs.append(Job(SOLUTION, puzzle, puzzle.solution_path, requested=accelerator))
        for example in (e for e in usable if e.puzzle == puzzle.name):
            jobs.append(Job(CORRECT if example.must_pass else MISTAKE, puzzle,
                            examples.build(example, course, scratch), example=example))
    return jobs, skipped


def _is_the_stubs_twin(result: CheckResult) -> bool:
    """The file is word for word the stub, so it was reported as not started and not run: the stub's
    own check already says what is wrong ("the stub passes as written"), once."""
    return result.not_started and not result.cases and len(result.findings) == 1


def judge(job: Job, result: CheckResult) -> str | None:
    """What is wrong with this verdict for this job; None when it is the verdict the job wants."""
    if result.status is Status.ERROR:
        return f"the checker itself failed: {headline(result)}"
    if job.subject == STUB:
        if result.passed:
            return "the stub passes as written; a stub must fail until the learner writes the kernel"
        if result.finding is not None:
            return ("a stub must load and run, then fail on what its kernel computes, "
                    f"but it fails with {headline(result)}")
        return None
    if job.subject in (SOLUTION, CORRECT, LOWERING):
        if result.passed or _is_the_stubs_twin(result):
            return None
        verb = "does not lower for a TPU" if job.subject == LOWERING else "fails"
        return f"{verb}: {headline(result)}"
    assert job.example is not None
    declared = job.example.kind
    if result.passed:
        return f"passes, but this mistake must fail with {declared}"
    if result.kind is None or result.kind.id != declared:
        return f"must fail with {declared}, but fails with {headline(result)}"
    finding = first_finding(result)
    if job.example.line and (finding is None or not any(job.example.line in w.text for w in finding.where)):
        named = (", ".join(f"line {w.line}" for w in finding.where) if finding is not None and finding.where
                 else "no line")
        return f"fails with {declared} as declared, but names {named}, not the line '{job.example.line}'"
    return None


OpenProgress = Callable[[int], RunProgress]


def _run(jobs: list[Job], progress: RunProgress) -> list[CheckResult]:
    """Every job's verdict, in the jobs' order; checked one (backend, mode) at a time, one pool per target."""
    from pallas_puzzles.worker.pool import WorkerPool, check_by_target, pool_size

    results: dict[int, CheckResult] = {}
    # An accelerator's runs first: one that is not there should stop the check before it has cost much.
    batches = sorted(dict.fromkeys((j.requested, j.mode) for j in jobs),
                     key=lambda key: (key[1] is Mode.LOWER, key[0] == backends.INTERPRET.name))
    for requested, mode in batches:
        batch = sorted((i for i, j in enumerate(jobs) if (j.requested, j.mode) == (requested, mode)),
                       key=lambda i: jobs[i].puzzle.target)

        def open_pool(target: str, size: int, requested: str = requested, mode: Mode = mode) -> WorkerPool:
            pool = WorkerPool(requested, pool_size(size), mode, target)
            pool.start()
            return pool

        pairs = [(jobs[i].puzzle, jobs[i].file) for i in batch]
        verdicts = check_by_target(pairs, open_pool, on_start=progress.started, on_done=progress.finished)
        results.update(zip(batch, verdicts))
    return [results[i] for i in range(len(jobs))]


def check_course(folder: Path, open_progress: OpenProgress, accelerator: str | None = None) -> CourseCheck:
    """Check the course in `folder`; `accelerator` ("gpu", "tpu") also runs the solutions there."""
    folder = folder.resolve()
    if not (folder / COURSE_FILE).is_file():
        raise UserError(f"{folder} holds no {COURSE_FILE}; run `pallas-puzzles dev check` in a course folder, "
                        f"or give its path (`pallas-puzzles dev new DIR` starts one).")
    report = CourseCheck(folder)
    try:
        report.course = course = load_course(folder)
    except UserError as exc:
        report.problems.append(Problem(None, COURSE_FILE, exc.message))
        return report
    report.problems, usable = static.problems(course)
    with tempfile.TemporaryDirectory(prefix="pallas-puzzles-dev-check-") as scratch:
        jobs, report.skipped = _jobs(course, usable, report.problems, Path(scratch), accelerator)
        with open_progress(len(jobs)) as progress:
            results = _run(jobs, progress) if jobs else []
    for job, result in zip(jobs, results):
        report.checked.append((job, result))
        wrong = judge(job, result)
        if wrong is not None:
            report.problems.append(Problem(job.puzzle.name, job.name, wrong))
    return report
