"""The overlap rule reads a kernel's jaxpr in program order (tpu_multichip/overlap.py): a copy overlaps
compute only when a product that reaches an output runs between its start and its wait.

The jaxprs here are stand-ins with the attributes overlap.py reads (no jax in this tier); the
chapter's kernels are checked for real by the course tier (mistakes.toml, correct.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pallas_puzzles.engine.targets.tpu_multichip.overlap import idle_copies


@dataclass(frozen=True)
class Prim:
    name: str


@dataclass(eq=False)
class Var:
    name: str


@dataclass(eq=False)
class Eqn:
    primitive: Prim
    invars: list[Any]
    outvars: list[Any]
    params: dict[str, Any] = field(default_factory=dict)
    source_info: Any = None

    def __post_init__(self) -> None:
        self.source_info = object()


@dataclass(eq=False)
class Jaxpr:
    invars: list[Any]
    outvars: list[Any]
    eqns: list[Eqn]


class Kernel:
    """Builds a kernel body: refs x (input), o (output), buf (scratch)."""

    def __init__(self) -> None:
        self.x, self.o, self.buf = Var("x"), Var("o"), Var("buf")
        self.eqns: list[Eqn] = []

    def op(self, name: str, *ins: Any, params: dict[str, Any] | None = None) -> Var:
        out = Var(name)
        self.eqns.append(Eqn(Prim(name), list(ins), [out], params or {}))
        return out

    def start(self) -> Eqn:
        self.eqns.append(Eqn(Prim("dma_start"), [self.buf], []))
        return self.eqns[-1]

    def wait(self) -> Eqn:
        self.eqns.append(Eqn(Prim("dma_wait"), [self.buf], []))
        return self.eqns[-1]

    def product(self) -> Var:
        return self.op("dot_general", self.op("get", self.buf), self.op("get", self.x))

    def store(self, value: Any) -> None:
        self.op("swap", self.o, value)

    def idle(self) -> dict[int, Any]:
        return idle_copies(Jaxpr([self.x, self.o, self.buf], [], self.eqns), [self.o])


def test_a_product_stored_between_the_start_and_the_wait_overlaps():
    k = Kernel()
    k.start()
    k.store(k.product())
    k.wait()
    assert k.idle() == {}


def test_a_product_computed_before_the_wait_and_stored_after_it_overlaps():
    k = Kernel()
    k.start()
    product = k.product()
    k.wait()
    k.store(product)
    assert k.idle() == {}


def test_a_store_that_is_not_a_product_is_no_compute():
    k = Kernel()
    start = k.start()
    k.store(k.op("broadcast_in_dim", 0.0))  # zeros into the output while the copy flies
    wait = k.wait()
    k.store(k.product())
    assert k.idle() == {id(start.source_info): wait.source_info}


def test_a_product_that_never_reaches_the_output_is_no_compute():
    k = Kernel()
    start = k.start()
    k.op("swap", k.buf, k.product())  # into scratch only
    wait = k.wait()
    assert k.idle() == {id(start.source_info): wait.source_info}


def test_index_arithmetic_is_no_product():
    k = Kernel()
    start = k.start()
    k.store(k.op("get", k.buf, k.op("mul", k.op("program_id"), 8)))
    wait = k.wait()
    assert k.idle() == {id(start.source_info): wait.source_info}


def test_the_wait_may_come_at_the_next_grid_step_inside_a_branch():
    k = Kernel()
    waiting = Kernel()
    waiting.buf = Var("inner buf")
    wait = waiting.wait()
    branch = Jaxpr([waiting.buf], [], waiting.eqns)
    k.op("cond", Var("pred"), k.buf, params={"branches": (Jaxpr([Var("b")], [], []), branch)})
    k.start()
    k.store(k.product())  # the copy started at the end of step s is waited for at step s + 1
    assert k.idle() == {}
    late = Kernel()
    late.op("cond", Var("pred"), late.buf, params={"branches": (branch,)})
    start = late.start()
    assert late.idle() == {id(start.source_info): wait.source_info}


@dataclass(eq=False)
class Literal:
    """A jaxpr Literal: a constant operand, with a value and no hash (jnp's % passes its divisor as one)."""

    val: Any

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Literal'")


def test_a_constant_operand_of_a_branch_or_call_is_read_without_hashing_it():
    k = Kernel()
    inner = Kernel()
    inner.o = Var("inner o")
    inner.store(inner.op("rem", Var("me"), Var("n")))
    k.op("pjit", Literal(1), k.o, params={"jaxpr": Jaxpr([Var("one"), inner.o], [], inner.eqns)})
    k.start()
    k.store(k.product())
    k.wait()
    assert k.idle() == {}


def test_a_product_moved_into_the_output_through_scratch_after_the_wait_overlaps():
    k = Kernel()
    acc = Var("acc")
    k.start()
    k.op("swap", acc, k.product())  # the product into a VMEM scratch while the copy flies
    k.wait()
    k.store(k.op("get", acc))  # moved into the output afterwards
    assert k.idle() == {}


def test_a_scratch_product_moved_out_inside_a_branch_overlaps():
    k = Kernel()
    acc = Var("acc")
    k.start()
    k.op("swap", acc, k.product())
    k.wait()
    branch = Kernel()
    inner_acc, branch.o = Var("inner acc"), Var("inner o")
    branch.store(branch.op("get", inner_acc))
    k.op("cond", Var("pred"), acc, k.o, params={"branches": (Jaxpr([inner_acc, branch.o], [], branch.eqns),)})
    assert k.idle() == {}


@dataclass(eq=False)
class Ref:
    """A variable with the aval text of a ref (jax's str of it): 'Ref<vmem>{...}' or a semaphore's."""

    name: str
    aval: str = "Ref<vmem>{float32[8,128]}"


def test_another_copys_wait_is_not_the_copys_own():
    k = Kernel()
    send_sem, load_sem, w, w_vmem = (Ref("send_sem", "Ref<semaphore_mem>{dma_sem[]}"),
                                     Ref("load_sem", "Ref<semaphore_mem>{dma_sem[]}"), Ref("w"), Ref("w_vmem"))
    start = Eqn(Prim("dma_start"), [k.buf, k.buf, send_sem], [])
    k.eqns.append(start)
    k.eqns.append(Eqn(Prim("dma_start"), [w, w_vmem, load_sem], []))  # a weight loaded while the copy flies
    k.eqns.append(Eqn(Prim("dma_wait"), [w, w_vmem, load_sem], []))
    k.store(k.product())
    own = Eqn(Prim("dma_wait"), [k.buf, k.buf, send_sem], [])
    k.eqns.append(own)
    assert id(start.source_info) not in k.idle()


def test_a_product_copied_into_the_output_from_scratch_inside_a_scoped_call_overlaps():
    k = Kernel()
    acc, sem, o = Ref("acc"), Ref("sem", "Ref<semaphore_mem>{dma_sem[]}"), Ref("o")
    k.o = o
    send_sem = Ref("send_sem", "Ref<semaphore_mem>{dma_sem[]}")
    start = Eqn(Prim("dma_start"), [k.buf, k.buf, send_sem], [])
    k.eqns.append(start)
    k.op("swap", acc, k.product())
    k.eqns.append(Eqn(Prim("dma_wait"), [k.buf, k.buf, send_sem], []))
    inner_acc, inner_o = Ref("inner acc"), Ref("inner o")  # sync_copy: run_scoped binds the refs to constvars
    scoped = Jaxpr([sem], [], [Eqn(Prim("dma_start"), [inner_acc, inner_o, sem], []),
                              Eqn(Prim("dma_wait"), [inner_acc, inner_o, sem], [])])
    scoped.constvars = [inner_acc, inner_o]  # type: ignore[attr-defined]
    k.op("run_scoped", acc, o, params={"jaxpr": scoped})
    assert id(start.source_info) not in k.idle()  # (the local copy's own start is idle: nothing remote)
