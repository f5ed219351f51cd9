"""Wrappers of public Pallas APIs for the Mosaic GPU chapter: what a launcher builds, two rules
that neither the interpreter nor the CUDA lowering checks, and one interpreter limit lifted.

- plgpu.kernel: records where the kernel is built and the shared memory its scratch asks for, and
  runs a `plgpu.ACC` given in scratch_types from a nested pl.run_scoped (see _accumulators_apart).
- pl.program_id / pl.num_programs inside a plgpu.kernel: the GPU interpreter answers 0 for every
  block, while the compiled kernel would see real indices; refused with a finding (teach lax.axis_index).
- wgmma_wait(n) with n > 0 inside an emit_pipeline body whose operands lack delay_release >= n: the
  wgmma still reads the slot the pipeline refills. The interpreter runs wgmma synchronously and the
  lowering accepts it, so only this lint sees it.

All wrappers act only while a case is active (record.active), except the ACC split, which is a
faithful rewrite and always applies. Installed once per process; learner files loaded afterwards
look the functions up on the modules and get the wrappers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pallas_puzzles.engine.learner_lines import learner_call_site, source_of
from pallas_puzzles.engine.targets.mosaic_gpu.record import Launch, active
from pallas_puzzles.engine.targets.mosaic_gpu.source_calls import keyword_line
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

_pipelines: list[tuple[int, SourceLine | None]] = []  # emit_pipeline bodies being traced: (delay_release, line)


def _site() -> SourceLine | None:
    record = active.record
    return learner_call_site(record.learner_file) if record is not None else None


def _smem_buffers(scratch: Any) -> tuple[tuple[tuple[int, ...], str, int], ...]:
    import jax
    import numpy as np

    buffers = []
    for leaf in jax.tree_util.tree_leaves(scratch, is_leaf=lambda x: hasattr(x, "memory_space")):
        space = str(getattr(leaf, "memory_space", "")).lower()
        if "smem" in space and hasattr(leaf, "shape"):
            shape = tuple(int(d) for d in leaf.shape)
            buffers.append((shape, str(np.dtype(leaf.dtype)), math.prod(shape) * np.dtype(leaf.dtype).itemsize))
    return tuple(buffers)


def _accumulators_apart(body: Callable[..., Any], scratch: Any) -> tuple[Callable[..., Any], Any]:
    """The interpreter refuses `plgpu.ACC` beside other scratch ("Scoped allocations in
    MemorySpace.REGS cannot be mixed", jax 0.12.0.1), a rule of its own: the compiled kernel accepts
    it. Allocate the accumulators in a pl.run_scoped inside the body instead; the body sees the
    same refs in the same places."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    def is_acc(item: Any) -> bool:
        return isinstance(item, plgpu.ACC)

    if isinstance(scratch, Mapping) and any(is_acc(v) for v in scratch.values()):
        accs = {k: v for k, v in scratch.items() if is_acc(v)}
        rest = {k: v for k, v in scratch.items() if not is_acc(v)}

        def keyword_body(*refs: Any, **scratch_refs: Any) -> Any:
            return pl.run_scoped(lambda **acc_refs: body(*refs, **scratch_refs, **acc_refs), **accs)

        return keyword_body, rest
    if isinstance(scratch, Sequence) and any(is_acc(v) for v in scratch):
        places = [n for n, item in enumerate(scratch) if is_acc(item)]
        rest_list = [item for item in scratch if not is_acc(item)]

        def positional_body(*refs: Any) -> Any:
            lead, others = refs[:len(refs) - len(rest_list)], list(refs[len(refs) - len(rest_list):])

            def with_accumulators(*acc_refs: Any) -> Any:
                merged = list(others)
                for place, ref in zip(places, acc_refs):
                    merged.insert(place, ref)
                return body(*lead, *merged)

            return pl.run_scoped(with_accumulators, *(scratch[n] for n in places))

        return positional_body, type(scratch)(rest_list) if isinstance(scratch, tuple) else rest_list
    return body, scratch


def _kernel(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def kernel(body: Any = None, **kwargs: Any) -> Any:
        if body is None:  # used as a decorator with arguments: @plgpu.kernel(out_type=...)
            return lambda fun: kernel(fun, **kwargs)
        record = active.record
        scratch = kwargs.get("scratch_types", ())
        if record is not None:
            line = _site()
            buffers = _smem_buffers(scratch)
            record.launches.append(Launch(line=line, scratch_line=keyword_line(line, "kernel", "scratch_types"),
                                          smem_bytes=sum(b[2] for b in buffers), smem_buffers=buffers,
                                          body=source_of(body)))
        body, kwargs["scratch_types"] = _accumulators_apart(body, scratch)
        return original(body, **kwargs)

    return kernel


def _refuse_program_id(original: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def program_query(axis: int) -> Any:
        if active.record is not None:
            line = _site()
            raise StrictViolation(Finding(
                FindingKind.GPU_PROGRAM_ID,
                f"pl.{name}({axis}) is called inside a plgpu.kernel; use jax.lax.axis_index with the grid "
                "axis's name instead.",
                where=(line,) if line is not None else ()))
        return original(axis)

    return program_query


def _pipeline(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def emit(body: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if active.record is None:
            return original(body, *args, **kwargs)
        specs = [s for s in kwargs.get("in_specs", ()) if s is not None]
        delay = min((int(getattr(s, "delay_release", 0) or 0) for s in specs), default=0)
        line = _site()

        @functools.wraps(body)
        def watched_body(*body_args: Any, **body_kwargs: Any) -> Any:
            _pipelines.append((delay, line))
            try:
                return body(*body_args, **body_kwargs)
            finally:
                _pipelines.pop()

        return original(watched_body, *args, **kwargs)

    return emit


def _wgmma_wait(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wgmma_wait(n: int) -> Any:
        if active.record is not None and _pipelines and isinstance(n, int) and n > _pipelines[-1][0]:
            delay, pipeline_line = _pipelines[-1]
            where = tuple(x for x in (_site(), pipeline_line) if x is not None)
            raise StrictViolation(Finding(
                FindingKind.WGMMA_IN_FLIGHT,
                f"wgmma_wait({n}) inside an emit_pipeline body leaves {n} wgmma running after the body "
                f"returns, but the pipeline's input BlockSpecs have delay_release={delay}, so their slots "
                "are refilled while those wgmma may still read them.",
                where=where))
        return original(n)

    return wgmma_wait


_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    plgpu.kernel = _kernel(plgpu.kernel)
    pl.program_id = _refuse_program_id(pl.program_id, "program_id")
    pl.num_programs = _refuse_program_id(pl.num_programs, "num_programs")
    plgpu.emit_pipeline = _pipeline(plgpu.emit_pipeline)
    plgpu.emit_pipeline_warp_specialized = _pipeline(plgpu.emit_pipeline_warp_specialized)
    plgpu.wgmma_wait = _wgmma_wait(plgpu.wgmma_wait)
    _installed = True
