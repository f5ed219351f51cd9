"""Choosing where kernels run: interpret (CPU), gpu or tpu; `auto` picks.

Resolution imports jax, so it runs in the worker process, never in the CLI.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pallas_puzzles.errors import UserError

CHOICES = ("auto", "interpret", "gpu", "tpu")

INSTALL_HINTS = {
    "gpu": 'pip install -U "jax[cuda12]"',
    "tpu": 'pip install -U "jax[tpu]"',
}


def validate(requested: str) -> str:
    value = requested.strip().lower()
    if value not in CHOICES:
        raise UserError(f"Unknown backend '{requested}'; choose one of {', '.join(CHOICES)}.")
    return value


def cache_dir() -> Path:
    """JAX's persistent compilation cache for compiled (gpu/tpu) kernels; safe to delete."""
    override = os.environ.get("PALLAS_PUZZLES_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pallas-puzzles" / "jax"


MIN_JAX = (0, 10, 2)
NEWEST_TESTED_JAX = (0, 12)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def jax_version_verdict(version: str) -> tuple[str | None, str | None]:
    """(error, warning) for an installed jax version; both None when it is a tested one."""
    found = _version_tuple(version)
    if found < MIN_JAX:
        wanted = ".".join(map(str, MIN_JAX))
        return (f"pallas-puzzles needs jax {wanted} or newer and found jax {version}; upgrade it with "
                f'`pip install -U "jax>={wanted}"`.'), None
    if found[:2] > NEWEST_TESTED_JAX:
        tested = ".".join(map(str, NEWEST_TESTED_JAX))
        return None, f"jax {version} is newer than the newest version tested with pallas-puzzles ({tested}.x); if a check misbehaves, try `pip install \"jax<{NEWEST_TESTED_JAX[0]}.{NEWEST_TESTED_JAX[1] + 1}\"`."
    return None, None


def prepare_environment(requested: str) -> None:
    """Set before jax is imported: the interpret backend never touches an accelerator."""
    if requested in ("interpret", "tpu-lower"):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def configure_jax() -> None:
    import warnings

    import jax

    # We choose Pallas's Triton lowering for GPUs (see select_gpu_lowering); JAX
    # announces its deprecation on every kernel, which is noise for a learner.
    warnings.filterwarnings("ignore", message=".*Pallas Triton backend is deprecated.*")

    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # an unwritable cache is only slower, never wrong
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _platforms() -> set[str]:
    import jax

    found = set()
    for platform in ("gpu", "tpu"):
        try:
            if jax.devices(platform):
                found.add(platform)
        except RuntimeError:
            pass
    return found


def select_gpu_lowering() -> None:
    """Lower GPU kernels with Triton, not Mosaic GPU.

    The course's portable subset (pallas_call with BlockSpecs, small elementwise
    and dot blocks) is what the Triton lowering compiles; Mosaic GPU wants
    128-thread warpgroup-shaped arrays and, from jax 0.10, deprecates
    pallas_call in favour of plgpu.kernel. jax 0.12 uses Triton for
    pallas_call by default; jax 0.10 needs this flag.
    """
    import jax

    try:
        jax.config.update("jax_pallas_use_mosaic_gpu", False)
    except (AttributeError, KeyError, ValueError):
        pass


def resolve(requested: str) -> str:
    """The backend that will run: `auto` is the accelerator JAX sees, else interpret."""
    if requested in ("interpret", "tpu-lower"):
        return requested
    present = _platforms()
    if requested == "auto":
        if "gpu" in present:
            select_gpu_lowering()
            return "gpu"
        return "tpu" if "tpu" in present else "interpret"
    if requested not in present:
        device = "GPU" if requested == "gpu" else "TPU"
        raise UserError(
            f"--backend {requested} needs a {device} that JAX can see, and none is visible here; "
            f"install JAX's {device} build with `{INSTALL_HINTS[requested]}` on a machine with a {device}, "
            f"or use --backend interpret."
            + (" Without a TPU, `pallas-puzzles lower N` checks that a kernel compiles for one." if requested == "tpu" else "")
        )
    if requested == "gpu":
        select_gpu_lowering()
    return requested
