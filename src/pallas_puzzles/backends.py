"""The backend registry: where kernels run, how each is found, which shape cases it uses.

Every other module names a backend through this registry, never as a bare
string. A check also has a mode: run the kernel, or only lower it (the TPU
lowering check, which runs Mosaic's lowering on this machine's CPU).
Resolution imports jax, so it runs in the worker process, never in the CLI.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from pallas_puzzles import environment, versions
from pallas_puzzles.errors import UserError

AUTO = "auto"


@dataclass(frozen=True)
class Backend:
    name: str
    platform: str | None  # the JAX platform that must be visible; None runs on the CPU
    device: str  # how a sentence names the hardware
    install: str = ""  # the pip command that provides it

    @property
    def interprets(self) -> bool:
        """Kernels run in Pallas's interpreter on the CPU, where the strict checks apply."""
        return self.platform is None

    @property
    def cases(self) -> str:
        """The key of this backend's shape cases in puzzles.toml."""
        return self.name


INTERPRET = Backend("interpret", None, "CPU")
GPU = Backend("gpu", "gpu", "GPU", 'pip install -U "jax[cuda12]"')
TPU = Backend("tpu", "tpu", "TPU", 'pip install -U "jax[tpu]"')
REGISTRY: dict[str, Backend] = {b.name: b for b in (INTERPRET, GPU, TPU)}
CHOICES = (AUTO, *REGISTRY)


class Mode(Enum):
    RUN = "run"
    LOWER = "lower"  # lower for a TPU on this machine; nothing runs


# The TPU generation `lower` lowers for: the abstract device of engine/targets/pallas_call/explain/lowering.py.
LOWERING_CHIP = "TPU v5e"


def validate(requested: str) -> str:
    """A backend name as typed by a user: one of CHOICES, or one sentence and exit 2."""
    value = requested.strip().lower()
    if value not in CHOICES:
        raise UserError(f"Unknown backend '{requested}'; choose one of {', '.join(CHOICES)}.")
    return value


def get(name: str) -> Backend:
    return REGISTRY[name]


def cache_dir() -> Path:
    """JAX's persistent compilation cache for compiled (gpu/tpu) kernels; safe to delete."""
    override = environment.CACHE_DIR.value()
    if override:
        return Path(override)
    return environment.cache_home() / "pallas-puzzles" / "jax"


def spec_outputs_dir() -> Path:
    """The specs' stored answers (engine/spec_outputs.py), beside JAX's cache; safe to delete."""
    if environment.CACHE_DIR.value():
        return cache_dir() / "spec-outputs"
    return cache_dir().parent / "spec-outputs"


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
        return None, (f"jax {version} is newer than the newest version tested with pallas-puzzles ({tested}.x); "
                      "if a check misbehaves, try "
                      f"`pip install \"jax<{NEWEST_TESTED_JAX[0]}.{NEWEST_TESTED_JAX[1] + 1}\"`.")
    return None, None


# XLA options that make the checker's programs cheap to compile. The strict
# interpreter's programs hold host callbacks and are compiled once per shape case,
# so XLA's optimisation passes cost far more than they could ever save at run
# time. An XLA flag that a jaxlib does not know aborts the process on its first
# compile, so each set is keyed by the jaxlib release it was tested on (the whole
# course and the course's mistakes.toml give the same verdicts with it); any other
# release gets none. jaxlib 0.12 dropped the fusion-emitter switch.
_COMMON_FAST_COMPILE = ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true")
FAST_COMPILE_FLAGS: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 10): (*_COMMON_FAST_COMPILE, "--xla_cpu_use_fusion_emitters=false"),
    (0, 12): _COMMON_FAST_COMPILE,
}


def fast_compile_flags(jaxlib_version: str | None) -> tuple[str, ...]:
    """The XLA flags tested with this jaxlib release; none for an untested one."""
    if jaxlib_version is None:
        return ()
    return FAST_COMPILE_FLAGS.get(_version_tuple(jaxlib_version)[:2], ())


def with_flags(existing: str, flags: tuple[str, ...]) -> str:
    """XLA_FLAGS with `flags` added, except those the user already set (theirs win)."""
    present = {token.split("=", 1)[0] for token in existing.split()}
    added = [flag for flag in flags if flag.split("=", 1)[0] not in present]
    return " ".join([*existing.split(), *added])


# XLA on the CPU may keep a bf16 result in float32 when it is cast straight back
# (excess precision), so "dot in bf16, then cast" would pass; compute at the precision
# asked for. Known to every jaxlib this project supports, so it is always set.
STRICT_PRECISION_XLA_FLAG = "--xla_allow_excess_precision=false"
# jaxlib 0.10 and 0.12 hand reductions to the YNNPACK library, which drops the rounding of
# a bf16 elementwise result widened before the sum: `(x * y).astype(jnp.float32).sum()`
# of bf16 x and y then adds exact products, where a TPU rounds each product to bf16.
# Those library fusions are turned off (XLA's own code rounds); like the fast-compile
# set, the flag is given only to the releases it was tested on.
_NO_LIBRARY_REDUCTIONS = "--xla_cpu_experimental_ynn_fusion_type=-reduce"
STRICT_PRECISION_FLAGS: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 10): (STRICT_PRECISION_XLA_FLAG, _NO_LIBRARY_REDUCTIONS),
    (0, 12): (STRICT_PRECISION_XLA_FLAG, _NO_LIBRARY_REDUCTIONS),
}


def strict_precision_flags(jaxlib_version: str | None) -> tuple[str, ...]:
    """The flags that make the CPU compute at the precision a kernel asks for, on this jaxlib."""
    if jaxlib_version is None:
        return (STRICT_PRECISION_XLA_FLAG,)
    return STRICT_PRECISION_FLAGS.get(_version_tuple(jaxlib_version)[:2], (STRICT_PRECISION_XLA_FLAG,))


# Packages that give JAX an accelerator without a `jax_plugins` entry point.
ACCELERATOR_DISTRIBUTIONS = ("libtpu", "libtpu-nightly")


@functools.cache
def accelerator_plugins() -> tuple[str, ...]:
    """The installed packages that can give JAX an accelerator (name==version); read without jax."""
    from importlib import metadata, util  # 18-34 ms to import: only when `auto` must be decided

    found = {f"{ep.dist.name}=={ep.dist.version}" for ep in metadata.entry_points(group="jax_plugins")
             if ep.dist is not None}
    found |= {f"{name}=={versions.installed(name)}" for name in ACCELERATOR_DISTRIBUTIONS
              if versions.installed(name) is not None}
    if util.find_spec("jax_plugins") is not None:  # old-style namespace plugins
        found.add("jax_plugins")
    return tuple(sorted(found))


def cpu_only(requested: str, mode: Mode) -> bool:
    """Will checks for `requested` in `mode` run JAX on the CPU alone? Decided without importing jax: the
    interpreters and the lowering check do; `auto` does where JAX_PLATFORMS says cpu or no package
    could give JAX an accelerator."""
    if mode is Mode.LOWER or requested == INTERPRET.name:
        return True
    if requested != AUTO:
        return False
    return environment.JAX_PLATFORMS.value().strip().lower() == "cpu" or not accelerator_plugins()


def prepare_environment(requested: str, mode: Mode) -> None:
    """Set before jax is imported: the CPU-only checks never touch an accelerator, and checkers that
    may use one share it."""
    if requested == INTERPRET.name or mode is Mode.LOWER:
        os.environ.setdefault(environment.JAX_PLATFORMS.name, "cpu")
    else:
        # JAX takes 75% of a GPU's memory when it starts, so a second process on the same GPU runs
        # out of memory (JAX's "GPU memory allocation" page); a pool runs several checkers on one GPU.
        os.environ.setdefault(environment.GPU_PREALLOCATE.name, "false")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    use_checker_xla_flags()


def use_checker_xla_flags() -> None:
    """Add the checker's XLA flags to this process's XLA_FLAGS, before jax is imported:
    strict precision always, the fast-compile set where it was tested and not turned off."""
    jaxlib = versions.installed("jaxlib")
    flags = strict_precision_flags(jaxlib)
    if not environment.FAST_COMPILE.turned_off():
        flags += fast_compile_flags(jaxlib)
    os.environ[environment.XLA_FLAGS.name] = with_flags(environment.XLA_FLAGS.value(), flags)


def configure_jax() -> None:
    """JAX's persistent compilation cache, for compiled (gpu/tpu) kernels."""
    import jax

    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # an unwritable cache is only slower, never wrong
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _present() -> set[str]:
    """The accelerator platforms JAX can see."""
    import jax

    found = set()
    for backend in REGISTRY.values():
        if backend.platform is None:
            continue
        try:
            if jax.devices(backend.platform):
                found.add(backend.platform)
        except RuntimeError:
            pass
    return found


def resolve(requested: str, mode: Mode = Mode.RUN) -> Backend:
    """The backend that will run: `auto` is the accelerator JAX sees, else interpret."""
    if mode is Mode.LOWER:
        return TPU
    if requested == INTERPRET.name:
        return INTERPRET
    present = _present()
    if requested == AUTO:
        chosen = next((b for b in (GPU, TPU) if b.platform in present), INTERPRET)
    else:
        chosen = get(requested)
        if chosen.platform not in present:
            lower_tip = (" Without a TPU, `pallas-puzzles lower N` checks that a kernel compiles for one."
                         if chosen is TPU else "")
            raise UserError(
                f"--backend {chosen.name} needs a {chosen.device} that JAX can see, and none is visible "
                f"here; install JAX's {chosen.device} build with `{chosen.install}` on a machine with a "
                f"{chosen.device}, or use --backend interpret.{lower_tip}"
            )
    return chosen
