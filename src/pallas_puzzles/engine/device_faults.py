"""A kernel the GPU stopped: CUDA's sticky errors, which leave the process's GPU context unusable.

Once a kernel faults (an illegal address, a trap, a misused barrier), every later CUDA call of that
process fails too. Seen on an H100 with jax 0.11.2 (issue 35): after one such kernel, every check in
the same checker answered CUDA_ERROR_LAUNCH_FAILED, reference solutions included. So a case that
meets one says so in the learner's terms, the check stops there, and the checker process is
replaced before the next check (worker/client.py, `CaseResult.lost_device`).
"""

from __future__ import annotations

import dataclasses
import re

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, Finding

# CUDA driver errors after which the context cannot be used again (CUDA's documentation of CUresult:
# "the process must be terminated and relaunched"), in the driver's and the runtime's spelling.
STICKY = {
    "CUDA_ERROR_LAUNCH_FAILED": "unspecified launch failure",
    "CUDA_ERROR_ILLEGAL_ADDRESS": "an illegal memory access",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": "an illegal instruction",
    "CUDA_ERROR_MISALIGNED_ADDRESS": "a misaligned address",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE": "an address in the wrong memory space",
    "CUDA_ERROR_INVALID_PC": "an invalid program counter",
    "CUDA_ERROR_HARDWARE_STACK_ERROR": "a hardware stack error",
    "CUDA_ERROR_ASSERT": "a device-side assert",
}
_RUNTIME_SPELLING = {
    "cudaErrorLaunchFailure": "CUDA_ERROR_LAUNCH_FAILED",
    "cudaErrorIllegalAddress": "CUDA_ERROR_ILLEGAL_ADDRESS",
    "cudaErrorIllegalInstruction": "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "cudaErrorMisalignedAddress": "CUDA_ERROR_MISALIGNED_ADDRESS",
    "cudaErrorAssert": "CUDA_ERROR_ASSERT",
}
_NAME = re.compile(r"\b(CUDA_ERROR_[A-Z_]+|cudaError[A-Za-z]+)\b")
_DRIVER_WORDS = {"unspecified launch failure": "CUDA_ERROR_LAUNCH_FAILED",
                 "an illegal memory access was encountered": "CUDA_ERROR_ILLEGAL_ADDRESS"}


def sticky_error(text: str) -> str | None:
    """The sticky CUDA error an error message reports (its driver name), or None."""
    for match in _NAME.finditer(text):
        name = _RUNTIME_SPELLING.get(match.group(1), match.group(1))
        if name in STICKY:
            return name
    return next((name for words, name in _DRIVER_WORDS.items() if words in text), None)


def recognised(case: CaseResult) -> CaseResult:
    """The case, its error said as a device fault where the error is a sticky CUDA one."""
    for finding in case.findings:
        if finding.kind not in (FindingKind.ERROR, FindingKind.INTERNAL):
            continue
        name = sticky_error(f"{finding.message}\n{finding.detail}")
        if name is not None:
            fault = Finding(FindingKind.DEVICE_FAULT,
                            f"The GPU stopped your kernel in shape case {case.label}: {STICKY[name]} ({name}).",
                            where=finding.where, detail=finding.detail or finding.message)
            return dataclasses.replace(case, passed=False, findings=(fault,))
    return case
