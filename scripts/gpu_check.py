"""The prepared GPU check: the course on a real NVIDIA GPU beside JAX's interpreters, in one go.

    scripts/gpu_check.sh [--dry-run] [--puzzles A,B] [--interpreter DIR] [--wheels DIR] [--budget S] OUT

Run through scripts/gpu_check.sh (which picks the Python: $PYTHON, else python3). It installs the
project from this checkout into a scratch folder without reaching an index (pip --no-index; the
build backend and watchdog come from the wheel folder that scripts/gpu_wheels.sh fills, where the
Python lacks them), then runs the project's own commands with --backend gpu, in the order of what
matters most: doctor; verify --all --solutions; dev check --backend gpu of the Mosaic GPU chapter
(every stub, solution, mistake and correct alternative, on the GPU and in the interpreter); a kernel
that never ends (stopped at its time limit, then the next check); perf --all --solutions (measured
kernel times); dev check --backend gpu of the other puzzles that declare a GPU. --dry-run runs the
same steps on the CPU with --backend interpret. Each step has a share of the time budget and is
stopped at it; nothing waits forever.

It writes OUT/summary.md (a line per puzzle: interpreter verdict, GPU verdict, kernel time; every
disagreement), OUT/results.json (everything the summary is made from, the commands' own JSON),
OUT/kernel_times.json (for the GPU performance card) and OUT/log.txt (every command's output).

Exit status: 0 when every step ran and the hardware agreed with the interpreter everywhere; 1 when
something disagreed, failed or ran out of time (the summary says what); 2 when it cannot run here
(no GPU JAX can see, no CUDA plugin, no pip, the install failed, bad arguments): one sentence.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_check_report  # noqa: E402  (beside this file)
import gpu_hang  # noqa: E402  (beside this file)

REPO = Path(__file__).resolve().parents[1]
HANG_LIMIT = 10  # seconds the never-ending kernel may run (PALLAS_PUZZLES_TIME_LIMIT)
RESERVE = 20  # seconds kept for writing the summary
CAPS = {"probe": 150, "install": 120, "list": 60, "doctor": 90, "verify": 180, "dev check": 300,
        "hang": 120, "perf": 180}  # the most each step may take; the budget left may cut it shorter
GPU_TARGET = "mosaic-gpu"  # its chapter's dev check runs first: the comparison that matters most
# The steps in the order of what matters most, each a share of the budget: the solutions on the GPU,
# the GPU chapter's kernels there beside the interpreter, a hang, the kernel times, the other chapters.

PROBE = r"""
import json, sys
from importlib import metadata
info = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import jax, jaxlib
except Exception as exc:
    info["error"] = f"JAX cannot be imported ({type(exc).__name__}: {exc})"
    print(json.dumps(info)); raise SystemExit(0)
info["jax"], info["jaxlib"] = jax.__version__, jaxlib.__version__
names = {(d.metadata["Name"] or "").lower() for d in metadata.distributions()}
info["cuda_plugins"] = sorted(n for n in names if n.startswith("jax") and "cuda" in n)
try:
    info["devices"] = [f"{d.platform}:{d.device_kind}" for d in jax.devices()]
    info["gpus"] = [d.device_kind for d in jax.devices("gpu")]
except Exception as exc:
    info["gpu_error"] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
print(json.dumps(info))
"""


class CannotRun(Exception):
    """The check cannot run here; the message is one sentence."""


class Stopped(Exception):
    """SIGTERM (gpu_check.sh's hard stop): end the running step and write what there is."""


def _stop(signum: int, frame: Any) -> None:
    raise Stopped()


@dataclass
class Step:
    name: str
    argv: list[str]
    exit: int | None = None  # None: stopped at its time limit, or never started
    expected: int = 0  # the exit status that means it went as it should
    seconds: float = 0.0
    timed_out: bool = False
    stdout: str = ""
    note: str = ""

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "command": " ".join(self.argv), "exit": self.exit, "expected": self.expected,
                "seconds": round(self.seconds, 1), "timed_out": self.timed_out, "note": self.note}

    def document(self) -> Any:
        """The command's JSON document on stdout, or None."""
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None


@dataclass
class Run:
    python: str
    out: Path
    work: Path
    backend: str
    budget: float
    log: Any
    started: float = field(default_factory=time.monotonic)
    steps: list[Step] = field(default_factory=list)

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.started) - RESERVE

    def env(self, **more: str) -> dict[str, str]:
        env = dict(os.environ)
        inherited = env.get("PYTHONPATH", "")
        env["PYTHONPATH"] = str(self.work / "site") + (os.pathsep + inherited if inherited else "")
        env["PALLAS_PUZZLES_CACHE_DIR"] = str(self.work / "cache")  # fresh: no verdict or compile kept from before
        env["COLUMNS"] = "160"
        if self.backend == "interpret":
            env["JAX_PLATFORMS"] = "cpu"
        env.update(more)
        return env

    def run(self, name: str, argv: list[str], cap_key: str, cwd: Path | None = None, **env: str) -> Step:
        """Run one command in its own process group, stopped (with its checkers) at its share of the budget."""
        step = Step(name, argv)
        self.steps.append(step)
        limit = min(CAPS[cap_key], self.left())
        if limit < 5:
            step.note = "not run: the time budget was spent"
            return step
        began = time.monotonic()
        process = subprocess.Popen(argv, cwd=cwd or self.work, env=self.env(**env), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            out, err = process.communicate(timeout=limit)
            step.exit = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            step.timed_out, step.note = True, f"stopped at its time limit ({limit:.0f} s)"
        except BaseException:  # stopped from outside: the step's checkers go with it
            os.killpg(process.pid, signal.SIGKILL)
            step.timed_out, step.note = True, "stopped from outside"
            raise
        step.seconds, step.stdout = time.monotonic() - began, out
        stopped = ", TIMED OUT" if step.timed_out else ""
        self.log.write(f"\n===== {name} ({step.seconds:.1f} s, exit {step.exit}{stopped})\n$ {' '.join(argv)}\n"
                       f"{out}{err}")
        self.log.flush()
        return step

    def cli(self, name: str, cap_key: str, *args: str, cwd: Path | None = None, **env: str) -> Step:
        return self.run(name, [self.python, "-m", "pallas_puzzles", *args], cap_key, cwd, **env)


def probe(run: Run, dry_run: bool) -> dict[str, Any]:
    """What the Python has (jax, the CUDA plugin, the GPUs); CannotRun when a GPU check cannot run."""
    step = run.run("probe", [run.python, "-c", PROBE], "probe")
    info = step.document() if step.exit == 0 else None
    if info is None:
        raise CannotRun(f"{run.python} could not report its JAX (exit {step.exit}); see {run.out / 'log.txt'}.")
    if "error" in info:
        raise CannotRun(f"{info['error']}: the check needs JAX installed for {run.python}.")
    if not dry_run:
        if not info["cuda_plugins"]:
            raise CannotRun(f"JAX's CUDA plugin is not installed for {run.python} (jax {info['jax']}); install "
                            f"JAX's CUDA build (pip install \"jax[cuda13]\") on a machine with an NVIDIA GPU, "
                            f"or run the dry run (--dry-run) on the CPU.")
        if not info.get("gpus"):
            raise CannotRun(f"JAX sees no NVIDIA GPU here ({info.get('gpu_error', 'no gpu device')}); run the check "
                            f"where one is visible, or run the dry run (--dry-run) on the CPU.")
    return info


def install(run: Run, wheels: Path) -> None:
    """The project from this checkout, and what the Python lacks from the wheel folder, into work/site."""
    site = run.work / "site"
    has = run.run("install: what is there", [run.python, "-c", "import importlib.util as u, json; print(json.dumps("
                  "{m: u.find_spec(m) is not None for m in ('pip', 'hatchling', 'watchdog')}))"], "install")
    present = has.document() or {}
    if not present.get("pip"):
        raise CannotRun(f"{run.python} has no pip, which installs the project from the checkout.")
    pip = [run.python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(site)]
    # The build backend: the Python's own where it has one, else pip builds in isolation from the wheels.
    build = ["--no-build-isolation"] if present.get("hatchling") else ["--find-links", str(wheels)]
    extra = [] if present.get("watchdog") else sorted(str(w) for w in wheels.glob("watchdog-*.whl"))[-1:]
    if not present.get("hatchling") and not list(wheels.glob("hatchling-*.whl")):
        raise CannotRun(f"{run.python} has no hatchling to build the project and {wheels} holds no wheel of it; "
                        f"fill the wheel folder with scripts/gpu_wheels.sh where an index is reachable.")
    if not present.get("watchdog") and not extra:
        raise CannotRun(f"{run.python} has no watchdog and {wheels} holds no wheel of it; "
                        f"fill the wheel folder with scripts/gpu_wheels.sh where an index is reachable.")
    step = run.run("install", [*pip, *build, str(REPO), *extra], "install")
    if step.exit != 0:
        raise CannotRun(f"Installing the project from {REPO} failed (exit {step.exit}); see {run.out / 'log.txt'}.")
    where = run.run("install: which copy runs",
                    [run.python, "-c", "import pallas_puzzles; print(pallas_puzzles.__file__)"], "install")
    if not where.stdout.strip().startswith(str(site)):
        raise CannotRun(f"The installed copy is not the one Python imports ({where.stdout.strip() or 'none'}).")


def _chosen(listing: dict[str, Any], wanted: list[str]) -> list[dict[str, Any]]:
    puzzles = listing["puzzles"]
    if not wanted:
        return puzzles
    found = [p for p in puzzles if p["name"] in wanted or str(p["puzzle"]) in wanted]
    unknown = sorted(set(wanted) - {p["name"] for p in found} - {str(p["puzzle"]) for p in found})
    if unknown:
        raise CannotRun(f"--puzzles names no puzzle of the course: {', '.join(unknown)}.")
    return found


def per_puzzle(run: Run, name: str, cap_key: str, args: list[str], chosen: list[dict[str, Any]],
               every: bool, cwd: Path) -> list[dict[str, Any]]:
    """One command over the chosen puzzles: `--all` when every puzzle is chosen, else one run each."""
    if every:
        step = run.cli(name, cap_key, *args, "--all", cwd=cwd)
        return [step.document() or {}]
    documents = []
    for puzzle in chosen:
        step = run.cli(f"{name} {puzzle['name']}", cap_key, *args, puzzle["name"], cwd=cwd)
        document = step.document() or {}
        if step.exit == 2 and "error" in document:  # it cannot run here, said in one sentence: not a failure
            step.expected, step.note = 2, "refused: " + document["error"]
        documents.append({"name": puzzle["name"], **document})  # a refusal's document names no puzzle
    return documents


def hang(run: Run, workspace: Path, course: Path) -> dict[str, Any]:
    """A kernel that never ends, stopped at its time limit; then a check that must pass."""
    endless = gpu_hang.endless_kernel((course / "solutions" / "01_constant_add.py").read_text(encoding="utf-8"))
    if endless is None:
        return {"note": "not run: the constant_add solution no longer has the line this step edits"}
    (workspace / "exercises" / "01_constant_add.py").write_text(endless, encoding="utf-8")
    stopped = run.cli("hang: a kernel that never ends", "hang", "verify", "constant_add", "--backend", run.backend,
                      "--json", cwd=workspace, PALLAS_PUZZLES_TIME_LIMIT=str(HANG_LIMIT))
    stopped.expected = 1  # a failed check: the time-out
    after = run.cli("hang: the next check", "hang", "verify", "constant_add_blocked", "--solutions", "--backend",
                    run.backend, "--json", cwd=workspace)
    return {"limit": HANG_LIMIT, "stopped": stopped.document(), "stopped_seconds": round(stopped.seconds, 1),
            "next": after.document(), "next_seconds": round(after.seconds, 1)}


def interpreter_reference(path: Path | None) -> dict[str, Any] | None:
    """The interpreter's verdicts of an earlier dry run (its OUT folder or results.json), carried here."""
    if path is None:
        return None
    file = path / "results.json" if path.is_dir() else path
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CannotRun(f"--interpreter {path} holds no readable results.json ({exc}).") from None


def check(run: Run, args: argparse.Namespace, results: dict[str, Any]) -> None:
    """Every step, in the order of what matters most; results fill in as they come."""
    results["environment"] = probe(run, args.dry_run)
    install(run, args.wheels)
    workspace = run.work / "workspace"
    course = run.work / "site" / "pallas_puzzles" / "course" / "builtin"
    run.cli("init", "list", "init", str(workspace))
    listing = run.cli("list", "list", "list", "--json", cwd=workspace).document()
    if not listing:
        raise CannotRun(f"`pallas-puzzles list --json` gave no course; see {run.out / 'log.txt'}.")
    chosen = _chosen(listing, args.puzzles)
    results["course"] = {"chapters": listing["chapters"], "puzzles": chosen}
    results["doctor"] = run.cli("doctor", "doctor", "doctor", cwd=workspace).stdout
    every = not args.puzzles
    results["verify"] = per_puzzle(run, "verify", "verify", ["verify", "--solutions", "--backend", run.backend,
                                                              "--json"], chosen, every, workspace)
    targets = {c["name"]: c["target"] for c in listing["chapters"]}
    on_backend = [p for p in chosen if args.dry_run or run.backend in p["backends"]]
    first = [p for p in on_backend if targets[p["chapter"]] == GPU_TARGET]
    results["dev_check"] = []

    def dev_check(group: list[dict[str, Any]], label: str) -> None:
        if group:
            picks = [a for p in group for a in ("--puzzle", p["name"])]
            accelerator = [] if args.dry_run else ["--backend", run.backend]
            step = run.cli(f"dev check: {label}", "dev check", "dev", "check", str(course), *accelerator, *picks,
                           "--json", cwd=workspace)
            results["dev_check"].append(step.document() or {})

    dev_check(first, "the Mosaic GPU chapter")
    results["hang"] = hang(run, workspace, course)
    results["perf"] = per_puzzle(run, "perf", "perf", ["perf", "--solutions", "--backend", run.backend, "--json"],
                                 chosen, every, workspace)
    dev_check([p for p in on_backend if p not in first], "the other chapters")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="gpu_check.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, metavar="OUT", help="a new or empty folder for the results")
    parser.add_argument("--dry-run", action="store_true", help="the same steps on the CPU, --backend interpret")
    parser.add_argument("--puzzles", type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
                        default=[], help="only these puzzles (names or numbers, comma-separated)")
    parser.add_argument("--interpreter", type=Path, default=None, metavar="DIR",
                        help="a dry run's OUT (or its results.json): the interpreter's verdicts where this "
                             "jax cannot run the interpreter")
    parser.add_argument("--wheels", type=Path, default=REPO / ".whl", metavar="DIR",
                        help="wheels of what the Python lacks (scripts/gpu_wheels.sh fills it; default .whl)")
    parser.add_argument("--budget", type=float, default=480.0, metavar="S", help="seconds for the whole check")
    args = parser.parse_args(argv)
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"error: {out} already holds something; give a new or empty folder.", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pallas-gpu-check-"))
    results: dict[str, Any] = {"schema": 1, "dry_run": args.dry_run, "budget": args.budget,
                               "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "puzzles": args.puzzles}
    with open(out / "log.txt", "w", encoding="utf-8") as log:
        run = Run(sys.executable, out, work, "interpret" if args.dry_run else "gpu", args.budget, log)
        results["backend"] = run.backend
        signal.signal(signal.SIGTERM, _stop)
        reference = None
        try:
            reference = interpreter_reference(args.interpreter)
            check(run, args, results)
        except CannotRun as exc:
            results["cannot_run"] = str(exc)
        except (Stopped, KeyboardInterrupt):
            results["stopped"] = "The check was stopped before its end (its hard time limit, or Ctrl-C)."
        finally:
            results["seconds"] = round(time.monotonic() - run.started, 1)
            results["steps"] = [s.record() for s in run.steps]
            shutil.rmtree(work, ignore_errors=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if "cannot_run" in results:
        (out / "summary.md").write_text(f"# GPU check: not run\n\n{results['cannot_run']}\n", encoding="utf-8")
        print(f"error: {results['cannot_run']}", file=sys.stderr)
        return 2
    if "course" not in results:
        (out / "summary.md").write_text(f"# GPU check: stopped\n\n{results['stopped']}\n", encoding="utf-8")
        print(f"error: {results['stopped']}", file=sys.stderr)
        return 1
    summary = gpu_check_report.Summary(results, reference)
    (out / "summary.md").write_text(summary.markdown(), encoding="utf-8")
    (out / "kernel_times.json").write_text(json.dumps(summary.kernel_times(), indent=1) + "\n", encoding="utf-8")
    print(summary.headline())
    return 0 if summary.clean else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
