"""The sample verdicts in the docs, printed by the real tool, so they cannot go stale.

    python scripts/readme_samples.py           rewrite the samples (scripts/generate_docs.py does too)
    python scripts/readme_samples.py --check   exit 1 when a page shows something the tool no longer prints

Each sample is a learner's mistake (an edit of a reference solution) checked with
`pallas-puzzles verify N --backend interpret` in a fresh workspace, 100 columns wide.
A sample sits between `<!-- sample NAME -->` and `<!-- /sample -->` in README.md or a page
under docs/ (scripts/generate_docs.py's `pages`), each sample in one place.
Only the seconds in a verdict's footer may differ between runs; they are compared
as "N.NN s".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIDTH = 100
COMMAND = "python scripts/generate_docs.py"


@dataclass(frozen=True)
class Sample:
    name: str
    puzzle: int
    file: str
    old: str  # a line of the reference solution ...
    new: str  # ... and the learner's version of it


SAMPLES = (
    Sample("verify-4-grid-rounds-down", 4, "04_outer_add_blocked.py",
           "grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0))", "grid=(pl.cdiv(n1, B1), n0 // B0)"),
    Sample("verify-2-global-offset", 2, "02_constant_add_blocked.py",
           "z_ref[...] = x_ref[...] + 10.0", "z_ref[...] = x_ref[pl.ds(pl.program_id(0) * B, B)] + 10.0"),
)
BLOCK = re.compile(r"(<!-- sample (?P<name>[\w-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /sample -->)", re.S)


def _tool(*args: str, cwd: Path) -> str:
    env = {**os.environ, "COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run([sys.executable, "-m", "pallas_puzzles", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    return done.stdout


def printed(sample: Sample, folder: Path) -> str:
    """What `verify` prints for the sample's mistake, without the notice before the verdict."""
    _tool("init", "ws", cwd=folder)
    workspace = folder / "ws"
    source = (REPO / "solutions" / sample.file).read_text(encoding="utf-8")
    assert source.count(sample.old) == 1, f"{sample.name}: the solution changed; update its edit"
    (workspace / "exercises" / sample.file).write_text(source.replace(sample.old, sample.new), encoding="utf-8")
    out = _tool("verify", str(sample.puzzle), "--backend", "interpret", cwd=workspace)
    return "".join(line for line in out.splitlines(keepends=True) if not line.startswith("Checking on"))


def normalise(text: str) -> str:
    """The verdict with its timing left out: the one thing that differs from run to run."""
    return re.sub(r"\d+\.\d\d s\b", "N.NN s", text)


def samples() -> dict[str, str]:
    """Every sample, as the tool prints it now."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sample in SAMPLES:
            folder = Path(tmp) / sample.name
            folder.mkdir()
            out[sample.name] = printed(sample, folder)
    return out


def shown(text: str) -> dict[str, str]:
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}


def pages() -> list[Path]:
    """The pages that may show a sample: generate_docs's list."""
    sys.path.insert(0, str(REPO / "scripts"))
    import generate_docs

    return generate_docs.pages()


def stale(shown_in: list[Path]) -> list[str]:
    """One line per sample that a page shows and the tool no longer prints."""
    fresh = samples()
    found = []
    for page in shown_in:
        for name, body in shown(page.read_text(encoding="utf-8")).items():
            if normalise(body) != normalise(fresh.get(name, "")):
                found.append(f"{page.relative_to(REPO)}: the sample {name} is stale; run {COMMAND}")
    return found


def rewrite(shown_in: list[Path]) -> list[str]:
    """Every stale sample printed afresh into its page (one that differs only in its timing is kept);
    one line per sample no longer in SAMPLES."""
    fresh = samples()
    unknown = []

    def body(match: re.Match[str]) -> str:
        old, new = match.group("body"), fresh.get(match.group("name"))
        return match.group(1) + (old if new is None or normalise(new) == normalise(old) else new) + match.group(4)

    for page in shown_in:
        text = page.read_text(encoding="utf-8")
        unknown += [f"{page.relative_to(REPO)}: there is no sample {name} in scripts/readme_samples.py"
                    for name in shown(text) if name not in fresh]
        new = BLOCK.sub(body, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return unknown


def main(argv: list[str]) -> int:
    found = stale(pages()) if "--check" in argv else rewrite(pages())
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
