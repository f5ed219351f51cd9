"""Choosing where kernels run: interpret (CPU), gpu or tpu; `auto` picks.

Resolution imports jax, so it runs in the worker process, never in the CLI.
"""

from __future__ import annotations

import os
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


def prepare_environment(requested: str) -> None:
    """Set before jax is imported: the interpret backend never touches an accelerator."""
    if requested == "interpret":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def configure_jax() -> None:
    import jax

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


def resolve(requested: str) -> str:
    """The backend that will run: `auto` is the accelerator JAX sees, else interpret."""
    if requested == "interpret":
        return "interpret"
    present = _platforms()
    if requested == "auto":
        return "gpu" if "gpu" in present else "tpu" if "tpu" in present else "interpret"
    if requested not in present:
        device = "GPU" if requested == "gpu" else "TPU"
        raise UserError(
            f"--backend {requested} needs a {device} that JAX can see, and none is visible here; "
            f"install JAX's {device} build with `{INSTALL_HINTS[requested]}` on a machine with a {device}, "
            f"or use --backend interpret."
        )
    return requested
