"""The efficiency chapter and the performance card through real checks and the CLI."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from helpers import COURSE, one_sentence

from pallas_puzzles import backends
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.cli import app
from pallas_puzzles.dev import examples
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.perf import chips

REPO = Path(__file__).resolve().parents[2]
# The TPU efficiency chapter; GPU puzzles' budgets are on the GPU card (tests/unit/test_gpu_card.py).
BUDGETED = [p for p in COURSE.puzzles if p.budget is not None and targets.get(p.target).cost_card]
PERFORMANCE_KEYS = {"hbm_bytes_read", "hbm_bytes_written", "hbm_bytes_min", "flops", "vmem_bytes",
                    "vmem_limit_bytes", "grid_steps", "est_seconds", "bound", "chip", "operands"}


@pytest.mark.parametrize("puzzle", BUDGETED, ids=lambda p: p.label)
def test_solution_meets_its_budget_on_every_backends_shape_cases(puzzle):
    """Run each backend's cases on the interpreter: the model sees the same layouts there."""
    for name in puzzle.backends:
        cases = puzzle.cases_for(backends.get(name))
        on_interpreter = dataclasses.replace(puzzle, cases={INTERPRET.cases: cases})
        result = check_puzzle(on_interpreter, REPO / "solutions" / puzzle.file, INTERPRET, fail_fast=False)
        failures = [(c.label, c.finding and c.finding.message) for c in result.cases if not c.passed]
        assert result.passed, (name, failures)
        for case in result.cases:
            assert case.performance.traffic_ratio <= (puzzle.budget.traffic or 99)
            assert case.performance.vmem_bytes <= case.performance.vmem_limit_bytes


def test_chip_table_matches_jaxs_own_tpu_info():
    from jax.experimental.pallas import tpu as pltpu

    if not hasattr(pltpu, "get_tpu_info_for_chip"):
        pytest.skip("this jax has no TPU info to compare with")
    for name, version in (("v5e", "TPU_V5E"), ("v6e", "TPU_V6E"), ("v5p", "TPU_V5P"), ("v4", "TPU_V4")):
        info = pltpu.get_tpu_info_for_chip(pltpu.ChipVersion[version], 1)
        chip = chips.chip(name)
        assert chip.hbm_bytes_per_second == info.mem_bw_bytes_per_second
        assert chip.flops_per_second == info.bf16_ops_per_second
        assert chip.vmem_capacity_bytes == info.vmem_capacity_bytes
        assert chip.vmem_limit_bytes <= chip.vmem_capacity_bytes
    # TPU7x: one TensorCore (each is its own device), from Google Cloud's published per-chip figures halved;
    # JAX's tpu_info rounds them (3.70e12 B/s, 1.155e15 FLOP/s): the two agree within 1 %.
    info, v7x = pltpu.get_tpu_info_for_chip(pltpu.ChipVersion.TPU_7X, 1), chips.chip("v7x")
    assert v7x.hbm_bytes_per_second == pytest.approx(info.mem_bw_bytes_per_second, rel=0.01)
    assert v7x.flops_per_second == pytest.approx(info.bf16_ops_per_second, rel=0.01)
    assert v7x.vmem_capacity_bytes == info.vmem_capacity_bytes and info.num_cores == 1


def test_verify_json_carries_the_traffic_the_model_predicts(workspace, cli, validate_json):
    result = cli.invoke(app, ["verify", "matmul_grid_k", "--solutions", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate_json(document)
    perf = document["performance"]
    assert PERFORMANCE_KEYS <= set(perf)
    # The largest case, M=100 N=200 K=256 with (64, 128, 128) blocks on a (2, 2, 2) grid: x's (i, k) and
    # y's (k, j) blocks change at every step (8 copies each, the partial edge blocks counted in bounds).
    assert perf["case"] == "M=100, N=200, K=256"
    assert perf["hbm_bytes_read"] == 4 * (4 * 64 * 128 + 4 * 36 * 128) + 4 * (4 * 128 * 128 + 4 * 128 * 72)
    assert perf["hbm_bytes_written"] == 4 * 100 * 200
    assert perf["hbm_bytes_min"] == 4 * (100 * 256 + 256 * 200 + 100 * 200)
    assert perf["flops"] == 2 * 100 * 200 * 256
    assert perf["grid_steps"] == 8 and perf["chip"] == "v5e" and perf["vmem_limit_bytes"] == 16 << 20
    assert perf["vmem_bytes"] == 2 * 4 * (64 * 128 + 128 * 128 + 64 * 128) + 4 * 64 * 128
    assert all(case["performance"] is not None for case in document["cases"])


def test_perf_shows_the_card_for_the_reference_solution(workspace, cli):
    result = cli.invoke(app, ["perf", "resident_weights", "--solution"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Performance on a TPU v5e" in text and "HBM traffic" in text and "1.0×" in text
    assert "Every array crosses between HBM and VMEM once" in text


def test_perf_on_another_chip_and_a_wrong_chip(workspace, cli, validate_json):
    result = cli.invoke(app, ["perf", "big_blocks", "--solution", "--chip", "v6e", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate_json(document)
    assert document["performance"]["chip"] == "v6e" and document["performance"]["vmem_limit_bytes"] == 32 << 20
    bad = cli.invoke(app, ["perf", "big_blocks", "--chip", "v99"])
    assert bad.exit_code == 2
    assert "Unknown TPU generation 'v99'" in one_sentence(bad.output)


def test_perf_on_tpu7x_models_one_tensorcore(workspace, cli, validate_json):
    """`perf 14 --solution --chip v7x`: a TPU7x card, in the terminal and in JSON alike."""
    result = cli.invoke(app, ["perf", "14", "--solution", "--chip", "v7x"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Performance on a TPU7x TensorCore (Ironwood) (model)" in text and "TPU7x: each of a chip's 2" in text
    document = json.loads(cli.invoke(app, ["perf", "14", "--solution", "--chip", "tpu7x", "--json"]).stdout)
    validate_json(document)
    perf = document["performance"]
    assert perf["chip"] == "v7x" and perf["generation"] == "a TPU7x TensorCore (Ironwood)"
    assert perf["vmem_limit_bytes"] == 32 << 20


def test_the_notebook_checks_on_tpu7x_too():
    """pp.check(..., chip="v7x") ends its verdict with a TPU7x card; an unknown chip is one sentence."""
    import pallas_puzzles as pp
    from pallas_puzzles.errors import UserError

    puzzle = COURSE.find("matmul_grid_k")
    report = pp.check(puzzle.name, str(puzzle.solution_path), backend="interpret", chip="v7x")
    text = " ".join(str(report).split())
    assert report.passed and "Performance on a TPU7x TensorCore (Ironwood) (model)" in text
    assert "Performance on" not in str(pp.check(puzzle.name, str(puzzle.solution_path), backend="interpret"))
    with pytest.raises(UserError, match="choose one of v4, v5e, v5p, v6e, v7x"):
        pp.check(puzzle.name, str(puzzle.solution_path), backend="interpret", chip="v9")


def test_a_failing_check_shows_no_card(workspace, cli):
    result = cli.invoke(app, ["perf", "fuse_two_calls"])  # the untouched stub
    assert result.exit_code == 1
    assert "Performance on a TPU" not in result.output


def test_a_correct_kernel_over_its_budget_shows_its_card(workspace, cli, validate_json):
    """The case the efficiency chapter is about: right numbers, too much traffic; the card shows where."""
    from helpers import MISTAKES, build_mistake

    mistake = next(m for m in MISTAKES if m.name == "p21_two_calls")
    built = build_mistake(mistake, workspace)
    built.replace(workspace / "exercises" / "21_fuse_two_calls.py")
    result = cli.invoke(app, ["perf", "fuse_two_calls"])
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "Performance on a TPU v5e (model)" in text and "pallas_call 2" in text
    assert text.index("The kernel moves") < text.index("Performance on a TPU")  # the verdict, then the card
    document = json.loads(cli.invoke(app, ["perf", "fuse_two_calls", "--json"]).stdout)
    validate_json(document)
    assert document["kind"] == "over-budget" and document["performance"]["calls"]




# w left in HBM and copied into a VMEM scratch by hand once, at the first step of a sequential grid:
# right on a TPU only (Pallas's Triton lowering has no scratch memory or TPU copy, and refuses
# pltpu.CompilerParams with a bare AssertionError), so it cannot be a correct.toml alternative of a
# puzzle that also runs on a GPU; the copy-counting it guards is checked here.
COPIED_BY_HAND = (
    examples.Edit(
        "\ndef resident_kernel(x_ref, w_ref, z_ref):\n"
        "    # x_ref: (BM, K) rows of x; w_ref: all of w, (K, N); z_ref: (BM, N) rows of z.\n"
        "    z_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)\n",
        "\ndef resident_kernel(x_ref, w_hbm, z_ref, w_vmem):\n"
        "    @pl.when(pl.program_id(0) == 0)\n"
        "    def _fetch_weights_once():\n"
        "        pltpu.sync_copy(w_hbm, w_vmem)\n\n"
        "    z_ref[...] = jnp.dot(x_ref[...], w_vmem[...], preferred_element_type=jnp.float32)\n"),
    examples.Edit(
        "\n            pl.BlockSpec((k, n), lambda i: (0, 0)),  # all of w: the same block at every step\n"
        "        ],\n        out_specs=pl.BlockSpec((BM, n), lambda i: (i, 0)),\n",
        "\n            pl.BlockSpec(memory_space=pl.ANY),\n"
        "        ],\n        out_specs=pl.BlockSpec((BM, n), lambda i: (i, 0)),\n"
        "        scratch_shapes=[pltpu.VMEM((k, n), w.dtype)],\n"
        "        compiler_params=pltpu.CompilerParams(dimension_semantics=(\"arbitrary\",)),\n"),
    examples.Edit("\nfrom jax.experimental import pallas as pl\n",
                  "\nfrom jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"),
)


def test_weights_copied_into_vmem_by_hand_once_meet_the_traffic_budget(tmp_path):
    """The cost model counts the bytes of the copy the kernel starts, once: w still crosses once."""
    puzzle = COURSE.find("resident_weights")
    by_hand = examples.Example("p23_weights_copied_once_by_hand", puzzle.name, "", COPIED_BY_HAND, must_pass=True)
    built = examples.build(by_hand, COURSE, tmp_path)
    result = check_puzzle(puzzle, built, INTERPRET, fail_fast=False)
    assert result.passed, [(c.label, c.finding and c.finding.message) for c in result.cases if not c.passed]
    assert all(c.performance.traffic_ratio <= (puzzle.budget.traffic or 99) for c in result.cases)
