"""The strict stand-in for `pl.kernel` and `pl.core_map`, and jax 0.12's TensorCoreMesh spelling.

JAX's current TPU guides launch a kernel with `pl.kernel(body, out_type=..., mesh=pltpu.TensorCoreMesh(
axis_name="core", num_cores=N))`: the body runs once on each of N TensorCores. Checking it on a CPU has
traps the stand-in takes care of, so the learner never writes `interpret=`:
- the interpret mode is read when `pl.kernel(...)` is applied, not when the kernel runs: the stand-in
  applies it only when the kernel is called, with the check's interpreter settings then;
- a TensorCoreMesh without num_cores asks the device for its cores, and a CPU device has none (an
  AttributeError with no message): refused in one sentence, at the learner's line;
- neither the interpreter nor the TPU lowering checks the core count: a mesh of another count than
  the chip's TensorCores per device (the puzzle's `cores`) is refused at the mesh's line.
Each call is recorded as a pallas_call would be (every operand left in HBM, one grid step per core),
so the copy ledger, the cost card and the explanations see it. jax 0.10 spells the mesh
`pltpu.create_tensorcore_mesh("core", num_cores=N)`; there `pltpu.TensorCoreMesh` is provided with
0.12's arguments. Outside a session everything passes through unchanged.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.learner_lines import learner_call_site, make_line
from pallas_puzzles.engine.targets.pallas_call.intercept import call_reader, stand_ins
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, StrictViolation, active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.perf import chips
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

_originals: dict[str, Any] = {}
_MADE_AT = "_pallas_puzzles_line"  # where a mesh was made, kept on the mesh itself


def _caller_line() -> SourceLine | None:
    """The line that called the function calling this one (the learner's, where a mesh is made)."""
    frame = sys._getframe(2)
    return make_line(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def tensorcore_mesh(axis_name: str, num_cores: int | None = None, **kwargs: Any) -> Any:
    """pltpu.TensorCoreMesh(axis_name=..., num_cores=...) on every jax this project runs on."""
    line = _caller_line()
    if num_cores is None:
        session = active.session
        if session is not None:
            raise StrictViolation(Finding(
                FindingKind.CORE_COUNT,
                "This TensorCoreMesh has no num_cores=: without a TPU JAX cannot ask the chip how many "
                f"TensorCores a device has. This puzzle's chip has {session.cores}: say num_cores={session.cores}.",
                where=(line,) if line is not None else ()))
    real = _originals.get("TensorCoreMesh")
    if real is not None:
        mesh = real(axis_name=axis_name, **({"num_cores": num_cores} if num_cores is not None else {}), **kwargs)
    else:
        mesh = _originals["create_tensorcore_mesh"](axis_name, num_cores=num_cores, **kwargs)
    try:
        object.__setattr__(mesh, _MADE_AT, line)
    except (AttributeError, TypeError):  # a mesh that takes no attributes: findings name the launch instead
        pass
    return mesh


def _cores(mesh: Any) -> int | None:
    """The number of cores of a TensorCoreMesh (None for any other mesh)."""
    if "TensorCoreMesh" not in type(mesh).__name__:
        return None
    return math.prod(int(n) for n in dict(mesh.shape).values())


def _check_cores(mesh: Any, session: StrictSession, launch: SourceLine | None) -> None:
    count = _cores(mesh)
    if count is None or count == session.cores:
        return
    made = getattr(mesh, _MADE_AT, None)
    where = tuple(line for line in (made, launch) if line is not None)
    like = [f"a TPU {chip.name}" for chip in chips.CHIPS.values() if chip.tensorcores_per_device == session.cores]
    raise StrictViolation(Finding(
        FindingKind.CORE_COUNT,
        f"This kernel's TensorCoreMesh has {count} core{'s' if count != 1 else ''}, and the chip this puzzle "
        f"simulates has {session.cores} TensorCore{'s' if session.cores != 1 else ''} per device"
        f"{' (as ' + ' or '.join(like) + ')' if like else ''}: use num_cores={session.cores}.", where=where))


def _record(body: Callable[..., Any], out_type: Any, cores: int, scratch_types: Any, operands: Any,
            session: StrictSession) -> Any:
    """The call as a CallRecord: operands in HBM (pl.kernel's default), one grid step per core."""
    import jax
    from jax.experimental import pallas as pl

    hbm = pl.BlockSpec(memory_space=pl.ANY)
    as_call = {"grid": (cores,), "in_specs": [hbm] * len(jax.tree.leaves(operands)),
               "out_specs": [hbm] * len(jax.tree.leaves(out_type)), "scratch_shapes": scratch_types}
    return call_reader.describe(body, as_call, operands, out_type, session.learner_file)


def _launch(body: Callable[..., Any], out_type: Any, mesh: Any, kwargs: dict[str, Any]) -> Callable[..., Any]:
    """The kernel as the learner's launcher calls it: built when called, with the session's settings."""

    @functools.wraps(body)
    def run(*operands: Any) -> Any:
        import jax

        session = active.session
        if session is None:
            return _originals["kernel"](body, out_type, mesh=mesh, **kwargs)(*operands)
        cores = _cores(mesh) or 1
        record = _record(body, out_type, cores, kwargs.get("scratch_types", ()), operands, session)
        record.operands = tuple(None if isinstance(o, jax.core.Tracer) else o for o in operands)
        session.calls.append(record)
        _check_cores(mesh, session, record.call_line)
        if not session.run_kernels:
            return stand_ins.outputs(out_type, operands, session.stand_ins, record.kernel_name)
        settings = dict(kwargs)
        if session.backend.interprets:
            settings["interpret"] = session.interpret_params()
        out = _originals["kernel"](body, out_type, mesh=mesh, **settings)(*operands)
        record.results = tuple(leaf for leaf in jax.tree.leaves(out) if not isinstance(leaf, jax.core.Tracer))
        return jax.block_until_ready(out) if record.results else out

    return run


def strict_kernel(body: Any = None, out_type: Any = (), *, mesh: Any, **kwargs: Any) -> Any:
    """pl.kernel: as a function of the body, or (no body) as a decorator."""
    if body is None or not callable(body) or isinstance(body, (list, tuple)):
        if body is None:
            return lambda fun: _launch(fun, out_type, mesh, kwargs)
        return _originals["kernel"](body, out_type, mesh=mesh, **kwargs)  # several bodies: JAX's own way
    return _launch(body, out_type, mesh, kwargs)


def strict_core_map(mesh: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
    """pl.core_map: runs the function at once on every core of the mesh, with the session's settings."""
    if _originals.get("core_map_notice"):  # jax 0.12 deprecates it: the learner still hears so
        warnings.warn(_originals["core_map_notice"], DeprecationWarning, stacklevel=2)
    session = active.session
    if session is None:
        return _originals["core_map"](mesh, **kwargs)
    _check_cores(mesh, session, learner_call_site(session.learner_file))
    if session.backend.interprets:
        kwargs["interpret"] = session.interpret_params()
    return _originals["core_map"](mesh, **kwargs)


def install() -> None:
    """Replace pl.kernel, pl.core_map and pltpu.TensorCoreMesh (idempotent)."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    if _originals:
        return
    with warnings.catch_warnings(record=True) as notices:
        warnings.simplefilter("always")
        _originals["kernel"], _originals["core_map"] = pl.kernel, pl.core_map
    _originals["core_map_notice"] = next((str(n.message) for n in notices
                                         if issubclass(n.category, DeprecationWarning)), "")
    _originals["TensorCoreMesh"] = getattr(pltpu, "TensorCoreMesh", None)
    if _originals["TensorCoreMesh"] is None:  # jax 0.10's spelling (0.12 still has it, deprecated)
        _originals["create_tensorcore_mesh"] = pltpu.create_tensorcore_mesh
    pl.kernel, pl.core_map = strict_kernel, strict_core_map
    pltpu.TensorCoreMesh = tensorcore_mesh
