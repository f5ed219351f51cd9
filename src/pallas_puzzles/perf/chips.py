"""TPU generations the cost model can estimate for, as plain figures.

Bandwidth, peak rate and VMEM capacity are JAX's own TPU info
(`pltpu.get_tpu_info_for_chip(pltpu.ChipVersion.TPU_V5E, 1)` and friends),
copied here so the model stays free of jax; tests/unit/test_perf_model.py checks
them against the installed jax where it has that function (0.10.2 and 0.12).
The default scoped VMEM limit (what a kernel may use without raising
`vmem_limit_bytes`) and the per-step cost (~0.35 us) come from the Pallas TPU
documentation ("Pipelining" and "TPU Pallas: matmul" guides).
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas_puzzles.errors import UserError

MIB = 1 << 20
STEP_SECONDS = 0.35e-6  # fixed cost of one grid step of the TPU pipeline


@dataclass(frozen=True)
class Chip:
    name: str
    hbm_bytes_per_second: float
    flops_per_second: float  # peak bf16 rate of the MXUs: an optimistic roof for float32 work
    vmem_capacity_bytes: int
    vmem_limit_bytes: int  # the default scoped limit a pallas_call gets
    step_seconds: float = STEP_SECONDS


CHIPS: dict[str, Chip] = {
    "v4": Chip("v4", 615e9, 137.5e12, 16 * MIB, 16 * MIB),
    "v5e": Chip("v5e", 820e9, 197e12, 128 * MIB, 16 * MIB),
    "v5p": Chip("v5p", 1230e9, 229.5e12, 64 * MIB, 16 * MIB),
    "v6e": Chip("v6e", 1640e9, 920e12, 128 * MIB, 32 * MIB),
}
DEFAULT_CHIP = "v5e"


def chip(name: str | None = None) -> Chip:
    key = (name or DEFAULT_CHIP).lower().removeprefix("tpu").strip("-_ ")
    if key not in CHIPS:
        raise UserError(f"Unknown TPU generation '{name}'; choose one of {', '.join(CHIPS)}.")
    return CHIPS[key]
