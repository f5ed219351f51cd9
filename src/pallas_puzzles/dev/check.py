"""`dev check`: is a course folder whole and right? The files and keys first, then every kernel it ships.

Every stub must fail (it loads and runs, then is wrong), every solution must pass on the
interpreter and lower for a TPU where the puzzle declares one, every listed mistake must fail with
its declared finding kind and name its line, every listed correct alternative must pass. The
same rules hold in the interpreter on each accelerator's own shape cases and tolerance (`hardware cases`):
a solution or an alternative passes there, and a mistake fails (with any kind) unless the course says
why the hardware may run it right. Else the hardware is held to cases that cannot tell right from
wrong (seen on an H200: no GPU case needed the mask of padded keys, so a kernel without it passed). The
kernels run in parallel on pools of checkers (one pool per target and mode at a time), as
`verify --all` does, through the checking service. A puzzle that cannot run here (a jax too old
for it) is skipped, not a problem.

With an accelerator (`--backend gpu`), the stubs, solutions and examples of every puzzle that
declares it run there too, and the hardware must agree with the interpreter on pass or fail: a
stub or a mistake fails there too, a solution or a correct alternative passes. The finding kind
may differ (a hang is a time-out on the hardware, a race may show as wrong numbers); a mistake the
hardware runs right, or an alternative it gets wrong, is a problem about the checker or the puzzle,
except a mistake whose numbers are right and which only goes over a budget on a cost the interpreter
counted (the GPU card: the compiled run counts nothing).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Mode
from pallas_puzzles.checking import service, support
from pallas_puzzles.checking.events import Listener
from pallas_puzzles.checking.jobs import Job, RunReport
from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import COURSE_FILE, load_course
from pallas_puzzles.dev import examples, static
from pallas_puzzles.dev.static import Problem
from pallas_puzzles.errors import UserError
from pallas_puzzles.report.headline import first_finding, headline
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Status

STUB, SOLUTION, LOWERING, MISTAKE, CORRECT = "stub", "solution", "lowering", "mistake", "correct"
HARDWARE_CASES = "hardware cases"  # the solution or an example in the interpreter on an accelerator's cases
ACCELERATORS = (backends.GPU, backends.TPU)


@dataclass(frozen=True, kw_only=True)
class CourseJob(Job):
    """A check that dev check asks for, and what it stands for."""

    subject: str  # one of the six above
    example: examples.Example | None = None
    cases_of: str = ""  # HARDWARE_CASES: the accelerator whose shape cases the interpreter runs

    @property
    def must_pass(self) -> bool:
        return self.example.must_pass if self.example is not None else self.subject != STUB

    @property
    def plain(self) -> tuple[str, str, Path]:
        """The key of this file's check on the interpreter's own cases: (puzzle, subject, file)."""
        subject = _subject_of(self.example) if self.cases_of else self.subject
        return self.puzzle.name, subject, self.file

    @property
    def name(self) -> str:
        """How a problem names what was checked: "stub", "solution on gpu", a mistake's name,
        "solution on the tpu cases"."""
        if self.cases_of:
            return f"{self.example.name if self.example is not None else SOLUTION} on the {self.cases_of} cases"
        what = self.example.name if self.example is not None else self.subject
        return f"{what} on {self.requested}" if self.requested != backends.INTERPRET.name else what


def _subject_of(example: examples.Example | None) -> str:
    """The subject of a file's check on the interpreter's own cases: the solution or an example."""
    if example is None:
        return SOLUTION
    return CORRECT if example.must_pass else MISTAKE


@dataclass
class CourseCheck:
    folder: Path
    course: Course | None = None
    problems: list[Problem] = field(default_factory=list)
    run: RunReport | None = None  # the kernels' checks; None when the course file could not be read

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def checked(self) -> list[tuple[CourseJob, CheckResult]]:
        """Every job that was checked, with its verdict, in job order."""
        outcomes = self.run.verdicts if self.run is not None else []
        return [(o.job, o.result) for o in outcomes if isinstance(o.job, CourseJob) and o.result is not None]

    @property
    def skipped(self) -> list[Problem]:
        """Not problems: the puzzles that cannot be checked here (this jax is too old for them), once each
        per reason (a jax too old for the interpreter may still run a puzzle on an accelerator)."""
        refused = {(o.puzzle.name, o.refusal.sentence): None for o in (self.run.refused if self.run else [])
                   if o.refusal is not None}
        return [Problem(name, "skipped", sentence) for name, sentence in refused]


def _jobs(course: Course, usable: list[examples.Example], problems: list[Problem], scratch: Path,
          accelerator: str | None, chosen: frozenset[str]) -> list[CourseJob]:
    jobs: list[CourseJob] = []
    interpret = backends.INTERPRET.name
    for puzzle in course.puzzles:
        # A file that is missing or not Python, a spec or target that cannot load: already a problem.
        broken = {p.subject for p in problems if p.puzzle == puzzle.name and p.blocking}
        if broken & {"spec", "target"} or (chosen and puzzle.name not in chosen):
            continue
        on = [interpret, *([accelerator] if accelerator is not None and accelerator in puzzle.backends else [])]
        if STUB not in broken and not puzzle.tour:
            jobs += [CourseJob(puzzle, puzzle.stub_path, backend, subject=STUB) for backend in on]
        if SOLUTION in broken:
            continue
        jobs += [CourseJob(puzzle, puzzle.solution_path, backend, subject=SOLUTION) for backend in on]
        hardware = [b for b in ACCELERATORS if puzzle.supports(b) and puzzle.own_cases(b)]
        jobs += [CourseJob(puzzle.on_cases_of(b), puzzle.solution_path, interpret, subject=HARDWARE_CASES,
                           cases_of=b.name) for b in hardware]
        if puzzle.supports(backends.TPU) and support.refusal(puzzle, backends.TPU, Mode.LOWER) is None:
            jobs.append(CourseJob(puzzle, puzzle.solution_path, backends.TPU.name, Mode.LOWER, subject=LOWERING))
        for example in (e for e in usable if e.puzzle == puzzle.name):
            file = examples.build(example, course, scratch)
            jobs += [CourseJob(puzzle, file, backend, subject=_subject_of(example), example=example)
                     for backend in on]
            jobs += [CourseJob(puzzle.on_cases_of(b), file, interpret, subject=HARDWARE_CASES, example=example,
                               cases_of=b.name) for b in hardware]
    return jobs


def _is_the_stubs_twin(result: CheckResult) -> bool:
    """The file is word for word the stub, so it was reported as not started and not run: the stub's
    own check already says what is wrong ("the stub passes as written"), once."""
    return result.not_started and not result.cases and len(result.findings) == 1


def _on_accelerator(job: CourseJob, result: CheckResult, interpreted: CheckResult | None) -> str | None:
    """An accelerator's verdict must agree with the job's on pass or fail; the kind may differ."""
    must_pass = job.must_pass
    if result.passed == must_pass or (must_pass and _is_the_stubs_twin(result)):
        return None
    if result.passed and job.example is not None and job.example.hardware_may_pass:
        return None
    if result.passed and interpreted is not None and not interpreted.passed and interpreted.numbers_right:
        return None  # over a budget on the cost the interpreter counted (the GPU card): the numbers are right
    said = headline(result) if not result.passed else "passes"
    if interpreted is None:
        return f"{said}, where it must {'pass' if must_pass else 'fail'}"
    if interpreted.passed == result.passed:  # the interpreter gives the same wrong verdict: said there
        return f"{said}, as on the interpreter"
    theirs = "passes" if interpreted.passed else f"fails with {interpreted.kind.id if interpreted.kind else 'no kind'}"
    return f"{said}, while the interpreter {theirs}: the hardware and the interpreter disagree"


def _on_hardware_cases(job: CourseJob, result: CheckResult, interpreted: CheckResult | None) -> str | None:
    """On an accelerator's shape cases and tolerance, in the interpreter: a solution or an alternative
    passes, a mistake fails (whatever the kind). What its own cases get wrong is said there, once."""
    if interpreted is not None and interpreted.passed != job.must_pass:
        return None
    cases, device = job.cases_of, backends.get(job.cases_of).device
    if job.must_pass:
        return None if result.passed else (f"fails on the {cases} shape cases (checked in the interpreter): "
                                           f"{headline(result)}; unless those cases, or the puzzle's "
                                           f"`tolerance` for {cases}, change, a {device} would fail it too")
    if not result.passed or (job.example is not None and job.example.hardware_may_pass):
        return None
    return (f"passes on the {cases} shape cases (checked in the interpreter): none of them shows this "
            f"mistake, so a {device} would pass it; add a {cases} case that shows it, or say in its "
            f"`hardware` key why the hardware may run it right")


def judge(job: CourseJob, result: CheckResult, interpreted: CheckResult | None = None) -> str | None:
    """What is wrong with this verdict for this job; None when it is the verdict the job wants.
    `interpreted`: for a job on an accelerator or its cases, the interpreter's verdict of the same file on
    the interpreter's own cases, if any."""
    if result.status is Status.ERROR:
        return f"the checker itself failed: {headline(result)}"
    if job.subject == HARDWARE_CASES:
        return _on_hardware_cases(job, result, interpreted)
    if job.requested != backends.INTERPRET.name and job.mode is Mode.RUN:
        return _on_accelerator(job, result, interpreted)
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


def run_jobs(jobs: list[CourseJob], progress: Listener) -> RunReport:
    """Every job's outcome, in the jobs' order: always a fresh check (a course's verdicts are never stored)."""
    return service.run(jobs, listeners=[progress])


def check_course(folder: Path, open_progress: OpenProgress, accelerator: str | None = None,
                 only: tuple[str, ...] = ()) -> CourseCheck:
    """Check the course in `folder`; `accelerator` ("gpu", "tpu") also runs the kernels there; `only`:
    the puzzles (numbers or names) whose kernels run (the files of the whole course are checked)."""
    folder = folder.resolve()
    if not (folder / COURSE_FILE).is_file():
        raise UserError(f"{folder} holds no {COURSE_FILE}; run `pallas-puzzles dev check` in a course folder, "
                        f"or give its path (`pallas-puzzles dev new DIR` starts one).")
    check = CourseCheck(folder)
    try:
        check.course = course = load_course(folder)
    except UserError as exc:
        check.problems.append(Problem(None, COURSE_FILE, exc.message))
        return check
    chosen = frozenset(course.find(key).name for key in only)
    check.problems, usable = static.problems(course)
    with tempfile.TemporaryDirectory(prefix="pallas-puzzles-dev-check-") as scratch:
        jobs = _jobs(course, usable, check.problems, Path(scratch), accelerator, chosen)
        with open_progress(len(jobs)) as progress:
            check.run = run_jobs(jobs, progress)
    interpreted = {job.plain: result for job, result in check.checked
                   if job.requested == backends.INTERPRET.name and not job.cases_of}
    for job, result in check.checked:
        wrong = judge(job, result, interpreted.get(job.plain))
        if wrong is not None:
            check.problems.append(Problem(job.puzzle.name, job.name, wrong))
    return check
