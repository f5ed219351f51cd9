"""NVIDIA GPUs the Mosaic GPU card can estimate for, as plain figures with their sources.

Tensor-core rates are dense (no 2:4 sparsity); NVIDIA's datasheets print the sparse rate
with a footnote, and the dense rate is half of it. SMEM per SM is what one SM holds; a
block may use at most `smem_per_block_bytes` of it (the CUDA lowering's `max_smem_bytes`,
232448 B = 227 KiB on Hopper). Figures are SXM parts at their datasheet power.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas_puzzles.errors import UserError

KIB, MB = 1024, 1_000_000
LAUNCH_SECONDS = 3e-6  # a kernel launch and its tail: the floor of any kernel's time (model constant)


@dataclass(frozen=True)
class GpuChip:
    name: str  # as the learner types it: --chip h100
    title: str  # as the card names it
    hbm_bytes_per_second: float
    bf16_flops_per_second: float  # dense bf16/fp16 tensor-core rate
    fp8_flops_per_second: float
    tf32_flops_per_second: float  # float32 operands go through the tensor cores as tf32
    smem_per_sm_bytes: int
    smem_per_block_bytes: int
    sm_count: int
    l2_bytes: int
    sources: tuple[str, ...]

    def mma_flops_per_second(self, dtype: str) -> float:
        """The dense tensor-core rate for MMA operands of this dtype (float16 and bfloat16 share one)."""
        if "float8" in dtype or dtype.startswith("f8"):
            return self.fp8_flops_per_second
        if dtype in ("float32", "f32", "tf32"):
            return self.tf32_flops_per_second
        return self.bf16_flops_per_second


HOPPER_SMEM = ("CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' (9.0, 10.0): "
               "228 KB shared memory per SM, 227 KB per block")
GPU_CHIPS: dict[str, GpuChip] = {
    "h100": GpuChip(
        "h100", "NVIDIA H100 SXM5", 3.35e12, 989.4e12, 1978.9e12, 494.7e12, 228 * KIB, 227 * KIB, 132, 50 * MB,
        ("NVIDIA H100 Tensor Core GPU datasheet (SXM): 3.35 TB/s HBM3; BF16/FP16 1,979, FP8 3,958, TF32 989 "
         "TFLOPS with sparsity (dense = half)",
         "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs (SXM5), 50 MB L2", HOPPER_SMEM)),
    "h200": GpuChip(
        "h200", "NVIDIA H200 SXM", 4.8e12, 989.4e12, 1978.9e12, 494.7e12, 228 * KIB, 227 * KIB, 132, 50 * MB,
        ("NVIDIA H200 Tensor Core GPU datasheet (SXM): 4.8 TB/s HBM3e; BF16/FP16 1,979, FP8 3,958, TF32 989 "
         "TFLOPS with sparsity (dense = half)",
         "Same GH100 die as the H100 SXM5: 132 SMs, 50 MB L2 (H100 architecture whitepaper)", HOPPER_SMEM)),
    "b200": GpuChip(
        "b200", "NVIDIA B200 (HGX, 1000 W)", 8.0e12, 2.25e15, 4.5e15, 1.1e15, 228 * KIB, 227 * KIB, 148, 126 * MB,
        ("NVIDIA HGX B200 datasheet, per GPU: 8 TB/s HBM3e; FP16/BF16 4.5, FP8 9, TF32 2.2 PFLOPS with "
         "sparsity (dense = half)",
         "148 SMs and the L2 size are not in NVIDIA's datasheet: third-party spec listings (148 SMs; L2 quoted "
         "from 65.5 to 126 MB, 126 MB used here; the model does not use L2)", HOPPER_SMEM)),
}
DEFAULT_GPU = "h100"


def gpu_chip(name: str | None = None) -> GpuChip:
    key = (name or DEFAULT_GPU).lower().removeprefix("nvidia").strip("-_ ")
    if key not in GPU_CHIPS:
        raise UserError(f"Unknown GPU '{name}'; choose one of {', '.join(GPU_CHIPS)}.")
    return GPU_CHIPS[key]


def is_gpu_chip(name: str) -> bool:
    return name.lower().removeprefix("nvidia").strip("-_ ") in GPU_CHIPS
