"""TPU generations the cost model can estimate for, as plain figures.

Bandwidth, peak rate and VMEM capacity of v4 to v6e are JAX's own TPU info
(`pltpu.get_tpu_info_for_chip(pltpu.ChipVersion.TPU_V5E, 1)` and friends),
copied here so the model stays free of jax; tests/course/test_efficiency.py checks
them against the installed jax where it has that function (0.10.2 and 0.12).
The default scoped VMEM limit (what a kernel may use without raising
`vmem_limit_bytes`) and the per-step cost (~0.35 us) come from the Pallas TPU
documentation ("Pipelining" and "TPU Pallas: matmul" guides).

TPU7x (Ironwood) has two TensorCores per chip and no megacore: each TensorCore is a
JAX device of its own, so the model's "device" is one TensorCore, with half of the
chip's figures. Google Cloud's TPU7x page (docs.cloud.google.com/tpu/docs/tpu7x) gives,
per chip: 2307 TFLOP/s bf16 (4614 fp8), 192 GiB of HBM at 7380 GB/s, two TensorCores.
JAX's tpu_info (`get_tpu_info_for_chip(ChipVersion.TPU_7X, 1)`, per TensorCore) rounds
them to 1.155e15 FLOP/s and 3.70e12 B/s, and gives 64 MiB of VMEM (and 1 MiB of SMEM)
per TensorCore; the test checks the two agree within 1 %. No default scoped VMEM limit
is published for TPU7x: v6e's 32 MiB is assumed.
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
    generation: str = ""  # what the card says it models; "" -> "a TPU <name>"
    tensorcores_per_device: int = 1  # TensorCores behind one JAX device (2: megacore)
    note: str = ""  # what the figures stand for, where a card should say it

    @property
    def models(self) -> str:
        """The generation as a card names it: "a TPU v5e", "a TPU7x TensorCore (Ironwood)"."""
        return self.generation or f"a TPU {self.name}"


CHIPS: dict[str, Chip] = {
    "v4": Chip("v4", 615e9, 137.5e12, 16 * MIB, 16 * MIB, tensorcores_per_device=2),
    "v5e": Chip("v5e", 820e9, 197e12, 128 * MIB, 16 * MIB),
    "v5p": Chip("v5p", 1230e9, 229.5e12, 64 * MIB, 16 * MIB, tensorcores_per_device=2),
    "v6e": Chip("v6e", 1640e9, 920e12, 128 * MIB, 32 * MIB),
    # Per TensorCore, each its own device: half of Cloud's 7380 GB/s and 2307 TFLOP/s per chip.
    "v7x": Chip("v7x", 7380e9 / 2, 2307e12 / 2, 64 * MIB, 32 * MIB, generation="a TPU7x TensorCore (Ironwood)",
                note="TPU7x: each of a chip's 2 TensorCores is a JAX device of its own (no megacore); the figures "
                     "are one TensorCore's, half the chip's 7380 GB/s of HBM and 2307 bf16 TFLOP/s."),
}
ALIASES = {"7x": "v7x", "ironwood": "v7x"}  # how TPU7x is also written (the "tpu" prefix is dropped first)
DEFAULT_CHIP = "v5e"


def chip(name: str | None = None) -> Chip:
    key = (name or DEFAULT_CHIP).lower().removeprefix("tpu").strip("-_ ")
    key = ALIASES.get(key, key)
    if key not in CHIPS:
        raise UserError(f"Unknown TPU generation '{name}'; choose one of {', '.join(CHIPS)}.")
    return CHIPS[key]
