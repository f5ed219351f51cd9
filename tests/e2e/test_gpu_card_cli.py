"""The GPU card through the real CLI (issue 36): `perf --json` carries a gpu_card per case with the
hand-counted traffic and FLOPs, `perf --chip` names the GPU, a chip of the wrong kind is refused, and
on a jax without the GPU interpreter the chapter is refused in one sentence."""

from __future__ import annotations

import json

import pytest
from helpers import COURSE, skip_if_jax_too_old

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.cli import app
from pallas_puzzles.workspace.folder import reference_solution

WGMMA = COURSE.find("wgmma_matmul")
PIPELINE = COURSE.find("pipeline_matmul")


def test_perf_json_carries_the_hand_counted_gpu_card_per_case(workspace, cli, validate_json):
    skip_if_jax_too_old(WGMMA)
    result = cli.invoke(app, ["perf", WGMMA.name, "--solution", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate_json(document)
    # TM = TN = 64, float16 in, float32 out: a is read once per column of blocks, b once per row of blocks.
    expected = {(128, 64, 128): (65_536, 65_536, 2_097_152), (64, 128, 192): (98_304, 49_152, 3_145_728),
                (192, 256, 64): (196_608, 49_152, 6_291_456)}
    seen = {}
    for case in document["cases"]:
        card = case["gpu_card"]
        assert card["chip"] == "h100" and card["bound"] in ("memory", "compute", "launch")
        assert card["est_seconds"] > 0 and card["smem_bytes"] > 0
        sizes = case["sizes"]
        seen[sizes["M"], sizes["K"], sizes["N"]] = (card["gmem_bytes_read"], card["gmem_bytes_written"],
                                                   card["flops"])
    assert seen == expected
    # SMEM per block: a (64, K) and b (K, 64) float16, z (64, 64) float32; K = 256 -> 80 KiB, two blocks per SM
    big = next(c["gpu_card"] for c in document["cases"] if c["sizes"]["K"] == 256)
    assert big["smem_bytes"] == 80 * 1024 and big["blocks_per_sm"] == 2
    assert document["gpu_card"]["case"] == big["case"]  # the card shown: the case that moves the most


def test_perf_chip_names_the_gpu_and_refuses_a_tpu_generation(workspace, cli):
    skip_if_jax_too_old(PIPELINE)
    result = cli.invoke(app, ["perf", PIPELINE.name, "--solution", "--chip", "h100"], terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "Performance on an NVIDIA H100 SXM5 (model)" in result.output
    assert "12 of 12 copy waits found the next copy in flight" in result.output  # 2 K steps, 6 blocks, both tiles
    b200 = json.loads(cli.invoke(app, ["perf", PIPELINE.name, "--solution", "--chip", "b200", "--json"]).stdout)
    h100 = json.loads(cli.invoke(app, ["perf", PIPELINE.name, "--solution", "--json"]).stdout)
    assert b200["gpu_card"]["chip"] == "b200"
    # The card's case (the one that moves the most): M = 128, K = 128, N = 192 with 64 x 64 tiles; a is read
    # once per column of blocks (3), b once per row of blocks (2): 2 * (128 * 128 * 2 * 3) bytes.
    assert b200["gpu_card"]["gmem_bytes_read"] == h100["gpu_card"]["gmem_bytes_read"] == 196_608
    assert b200["gpu_card"]["est_seconds"] < h100["gpu_card"]["est_seconds"]


def test_perf_chip_of_the_wrong_kind_or_unknown_is_one_sentence(workspace, cli):
    wrong = cli.invoke(app, ["perf", PIPELINE.name, "--solution", "--chip", "v5e"])
    assert wrong.exit_code == 2
    assert f"Puzzle {PIPELINE.number} runs on an NVIDIA GPU: --chip takes h100, h200, b200, not 'v5e'." in wrong.output
    tpu = cli.invoke(app, ["perf", "constant_add", "--solution", "--chip", "h100"])
    assert tpu.exit_code == 2 and "runs on a TPU: --chip takes v4, v5e, v5p, v6e, v7x, not 'h100'." in tpu.output
    unknown = cli.invoke(app, ["perf", PIPELINE.name, "--solution", "--chip", "a100"])
    assert unknown.exit_code == 2 and "Traceback" not in unknown.output
    assert "Unknown GPU 'a100'; choose one of h100, h200, b200." in unknown.output
    several = cli.invoke(app, ["perf", "--all", "--solution", "--chip", "a100"])
    assert several.exit_code == 2 and "Unknown chip 'a100'; choose a TPU generation" in several.output


def test_perf_on_a_jax_without_the_gpu_interpreter_refuses_in_one_sentence(workspace, cli):
    refused = support.refusal(PIPELINE, INTERPRET)
    if refused is None:
        pytest.skip("this jax has the GPU interpreter")
    result = cli.invoke(app, ["perf", PIPELINE.name, "--solution"])
    assert result.exit_code == 2
    assert f"Puzzle {PIPELINE.number} needs jax 0.12 or newer" in result.output and "Traceback" not in result.output


def test_the_notebook_shows_the_gpu_card_for_the_chip_asked(workspace):
    import pallas_puzzles as pp

    skip_if_jax_too_old(WGMMA)
    report = pp.check(WGMMA.name, str(reference_solution(WGMMA)), backend="interpret", chip="b200")
    assert report.passed and report.gpu_card is not None
    assert report.gpu_card.chip == "b200" and report.gpu_card.counts.gmem_bytes_read == 196_608  # K = 256 case
    assert "Performance on an NVIDIA B200" in str(report)
    assert "Performance on an NVIDIA B200" in report._repr_html_()
