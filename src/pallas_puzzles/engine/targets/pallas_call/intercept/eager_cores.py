"""`pl.kernel` calls and the cores of a multi-core grid, run op by op as eager.py runs a pallas_call.

Two things eager.py alone would still compile, every check afresh (0.3-1 s a case):
- a `pl.kernel` binds Pallas's mpmd_map primitive, whose impl compiles the call; on a CPU its
  lowering is the fallback that turns the mesh into a grid and hands the TPU interpreter a
  pallas_call's parameters. Here that fallback is asked for those parameters (its call of
  pallas_call's lowering is stopped there), and the call goes to pallas_call's impl, which
  eager.py interprets op by op;
- on more than one core the interpreter runs each core's loop on a thread of its own, tracing
  and compiling it (its thread_map). Here, inside an eager interpretation, each core runs its
  loop op by op on its own thread instead, as part of the same interpretation.

Each core is registered with core_threads.py while it runs, as in the interpreter's own thread_map.
Private names (pallas_call/jax_private.py lists them, with the
versions checked): mpmd_map_p's impl, mpmd's fallback lowering, pallas_call's lowering, the
interpreter's thread_map. Nothing here changes what a kernel computes.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept import core_threads, eager

_capture = threading.local()  # .on: the next pallas_call lowering on this thread only reports its parameters
_installed = False
NESTED_TOKEN = 1337  # the token value the interpreter gives the threads of its thread_map (on both versions)


class _Parameters(Exception):
    """Carries the parameters a lowering was about to lower, out of the fallback lowering."""

    def __init__(self, params: dict[str, Any]) -> None:
        super().__init__("pallas_call parameters")
        self.params = params


def _reporting(lowering: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(lowering)
    def lower(ctx: Any, *nodes: Any, **params: Any) -> Any:
        if getattr(_capture, "on", False):
            raise _Parameters(params)
        return lowering(ctx, *nodes, **params)

    return lower


class _Context:
    """What the fallback lowering reads of its lowering context before it lowers: the operands' types."""

    def __init__(self, avals_in: list[Any]) -> None:
        self.avals_in = avals_in


def _kernel_eagerly(original: Callable[..., Any]) -> Callable[..., Any]:
    import jax
    from jax.experimental.pallas.tpu import InterpretParams

    mpmd, call = jax_private.mpmd(), jax_private.pallas_call()

    @functools.wraps(original)
    def impl(*args: Any, **params: Any) -> Any:
        if not eager.settings()[0] or not isinstance(params.get("interpret"), InterpretParams):
            return original(*args, **params)
        _capture.on = True
        try:
            mpmd._mpmd_map_fallback_lowering(_Context([jax.typeof(a) for a in args]), *args, **params)
        except _Parameters as found:
            as_call = found.params
        except Exception:  # a form the fallback refuses (several meshes): JAX's own way says why
            return original(*args, **params)
        else:
            return original(*args, **params)
        finally:
            _capture.on = False
        return call.pallas_call_p.impl(*args, **as_call)

    return impl


def _cores_eagerly(original: Callable[..., Any]) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    @functools.wraps(original)
    def thread_map(f: Callable[..., Any], num_threads: Any, token: Any, *args: Any, device_id: Any = None,
                   on_exception: Callable[..., Any] = lambda *a, **k: None, **kwargs: Any) -> Any:
        threads = int(num_threads)
        if threads == 1 or not eager.interpreting():
            return original(f, num_threads, token, *args, device_id=device_id, on_exception=on_exception, **kwargs)
        limit, numpy_ops = eager.settings()

        def core(index: int) -> None:
            try:
                with eager.joined(limit, numpy_ops), jax.disable_jit():
                    f(jnp.int32(index), jnp.int32(NESTED_TOKEN), *args)
            finally:
                core_threads.finished(index)

        core_threads.started((int(device_id) if device_id is not None else 0) * threads, threads)
        with futures.ThreadPoolExecutor(max_workers=threads) as pool:
            done = [pool.submit(core, index) for index in range(threads)]
        errors = [d.exception() for d in done if d.exception() is not None]
        if errors:  # as the interpreter's own thread_map reports a failed core (jax 0.12 also passes the token)
            takes_token = "token" in inspect.signature(on_exception).parameters
            on_exception(errors[0], device_id=device_id, **({"token": token} if takes_token else {}))
            raise errors[0]
        return token

    return thread_map


def install() -> None:
    """Install the hooks once per process; they act only inside eager.eagerly (the fast path)."""
    global _installed
    if _installed:
        return
    mpmd, call, interpreter = jax_private.mpmd(), jax_private.pallas_call(), jax_private.interpreter()
    call._pallas_call_lowering = _reporting(call._pallas_call_lowering)
    mpmd.mpmd_map_p.def_impl(_kernel_eagerly(mpmd.mpmd_map_p.impl))
    interpreter.thread_map = _cores_eagerly(interpreter.thread_map)
    _installed = True
