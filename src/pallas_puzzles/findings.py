"""The catalogue of finding kinds: every kind of verdict the checker can give.

Each kind has one stable name (used in `--json`, `tests/mistakes.toml` and the
code), a short label, and its plain-language explanation, written here and
nowhere else. Producers say *what* happened in a finding's message; the
catalogue says what it usually means and what to do.
"""

from __future__ import annotations

from enum import Enum


class FindingKind(Enum):
    # value: (name, label, explanation)
    NOT_STARTED = (
        "not-started", "not started yet",
        "This file is still the original exercise. Read its docstring, fill in the lines marked TODO, "
        "and save: the check runs again on every save.",
    )
    SYNTAX = (
        "syntax", "syntax error",
        "Fix this line (or the one just before it) and save again; nothing was run.",
    )
    IMPORT = (
        "import", "error on import",
        "Code at the top level of the file runs when it is imported; the error is in the line shown.",
    )
    MISSING_ENTRY = (
        "missing-entry", "launcher missing",
        "Keep the launcher function's name and arguments as the exercise gives them.",
    )
    ERROR = (
        "error", "error while running",
        "The kernel or its launcher raised an error; the line shown is where it happened.",
    )
    SHAPE = (
        "shape", "wrong output shape",
        "Check out_shape in pallas_call and the order of the dimensions (rows first).",
    )
    OOB_BLOCK = (
        "oob-block", "block index outside the array",
        "An index_map returns block numbers, not element offsets: block i starts at element "
        "i * block_size, and every block must start inside the array. A grid of pl.cdiv(size, block) "
        "steps gives each block exactly one program.",
    )
    OOB_READ = (
        "oob-read", "read past the edge of a block",
        "Inside a kernel a ref is the block, not the whole array: indices run from 0 to the block size. "
        "Plain interpret mode would silently clamp this read and could hide the bug; on real hardware "
        "it reads whatever memory lies there.",
    )
    OOB_WRITE = (
        "oob-write", "write past the edge of a block",
        "A store like ref[pl.ds(start, size)] = value must fit inside the block: 0 <= start and "
        "start + size <= the block's length along that dimension.",
    )
    REVISIT = (
        "revisit", "output block revisited",
        "Pallas copies an output block back to memory when the block index changes, so coming back to "
        "a block later overwrites what was written before. Give every grid point its own output block, "
        "or keep the visits to one block consecutive (the reduction axis last in the grid).",
    )
    RACE = (
        "race", "two programs write one block",
        "On a GPU (and on a TPU's parallel axes) these programs run at the same time and race to write "
        "one block. Give each program its own output block, or, where the puzzle asks for a reduction "
        "over the grid, mark that axis 'arbitrary' in dimension_semantics.",
    )
    TPU_LOWERING = (
        "tpu-lowering", "would not compile for a TPU",
        "Mosaic, the TPU compiler, rejects this kernel; the message names the rule it broke.",
    )
    TIMEOUT = (
        "timeout", "time limit reached",
        "A kernel that never finishes usually has a loop whose end is never reached (a lax.fori_loop or "
        "while_loop bound that is far too large) or a grid with far more programs than intended (the "
        "element count instead of pl.cdiv(n, block)).",
    )
    MEMORY = (
        "memory", "memory limit reached",
        "The check took more memory than the grader allows. A kernel rarely needs much: look for an "
        "out_shape, a scratch buffer or an array made in the launcher that is far larger than the "
        "puzzle's arrays (a size multiplied where it should be divided, or a block the size of the grid).",
    )
    CRASH = (
        "crash", "checker process crashed",
        "A hard crash usually comes from an enormous grid or block; check the sizes in your launcher.",
    )
    INTERNAL = (
        "internal", "pallas-puzzles bug",
        "This is a fault in pallas-puzzles, not in your kernel; the details below help us fix it.",
    )
    MISMATCH_UNWRITTEN = (
        "mismatch-unwritten", "output never written",
        "No program wrote these elements. Check that the grid covers the whole output (pl.cdiv rounds "
        "up, so the partial last block gets a program) and that every program writes its whole block.",
    )
    MISMATCH_NAN = (
        "mismatch-nan", "NaN in the output",
        "NaN where the spec has a number. Interpret mode fills two kinds of memory with NaN: the padding "
        "of a block that hangs over the array edge, and scratch or accumulator buffers before their "
        "first write. Mask padding with jnp.where before it is reduced or mixed into other elements, "
        "and initialise accumulators (pl.when on the first step) before adding to them.",
    )
    MISMATCH_GARBAGE = (
        "mismatch-garbage", "garbage in the output",
        "Huge values: the kernel read an output or scratch ref before writing it, and uninitialised "
        "memory reached the result. Initialise accumulators first.",
    )
    MISMATCH_WRONG = (
        "mismatch-wrong", "wrong numbers",
        "The numbers differ. Work one of the first mismatches out by hand from the spec and compare "
        "with what your kernel computes for that element.",
    )
    SEMAPHORE_STALL = (
        "semaphore-stall", "waited on a semaphore nothing signals",
        "A wait ends only when a copy started on that semaphore (or a semaphore_signal) adds to it. "
        "Start every copy before you wait on it, wait on the semaphore the copy was given, and wait "
        "once per copy: a second wait for one copy waits for ever.",
    )
    DMA_READ_BEFORE_WAIT = (
        "dma-read-before-wait", "read before the copy was waited on",
        "A started copy may land at any moment until its .wait() returns: before that, its destination "
        "holds old or uninitialised data. Wait for a copy before the first line that reads its destination.",
    )
    DMA_SLOT_IN_USE = (
        "dma-slot-in-use", "copy started into a slot still being read",
        "A new copy may overwrite its destination as soon as it starts, so start it only into a buffer "
        "that nothing reads any more. With two slots, chunk i+1 goes into the slot chunk i is not using: "
        "slot (i + 1) % 2.",
    )
    DMA_SHAPE = (
        "dma-shape", "copy between different shapes",
        "A DMA copies a block to a block of the same shape. Slice both sides with .at[...] so that "
        "they agree, e.g. x_hbm.at[pl.ds(start, rows)] into a scratch buffer of (rows, ...).",
    )
    DMA_OVERRUN = (
        "dma-overrun", "copy runs past the array",
        "The window a copy reads or writes (ref.at[pl.ds(start, size)]) must lie inside the array: "
        "start + size <= its length. Check the start of the last chunk.",
    )
    DMA_DTYPE = (
        "dma-dtype", "copy between different dtypes",
        "A DMA moves bytes; it does not convert numbers. Copy into a buffer of the source's dtype "
        "and convert in the kernel (buf[...].astype(jnp.bfloat16)) once the copy has landed.",
    )
    DMA_NOT_WAITED = (
        "dma-not-waited", "copy never waited on",
        "Every copy a kernel starts must be waited on before the kernel ends, and before anything reads "
        "its destination: .wait() on a descriptor with the same semaphore and the same number of bytes. "
        "A copy left in flight may land after the kernel has finished, or not at all, and leaves its "
        "semaphore counting bytes that nobody takes.",
    )
    DMA_WRONG_COPY = (
        "dma-wrong-copy", "a wait another copy satisfied",
        "A wait counts bytes on its semaphore, not copies: while two copies are in flight on one semaphore, "
        "either one landing can end the wait meant for the other, and the data read next may not be there "
        "yet. Give each copy in flight its own semaphore (sems.at[slot]), or wait for every copy on the "
        "shared semaphore before reading any of their destinations.",
    )
    JAX_TOO_OLD = (
        "jax-too-old", "needs a newer jax",
        "This puzzle uses Pallas APIs that this jax does not have. Upgrade jax (pip install -U jax; "
        "the newest releases need a newer Python), or skip to the next puzzle.",
    )
    UNSUPPORTED = (
        "unsupported", "does not run here",
        "Each chapter runs on the backends it lists (`pallas-puzzles list` shows them): its kernels use "
        "an idiom the others do not have. Check this puzzle on one of those backends, or move on to the next.",
    )
    OVER_BUDGET = (
        "over-budget", "correct, but over budget",
        "The numbers are right, but this puzzle also grades what the kernel costs on a TPU (the performance "
        "card's model): every block the pipeline copies between HBM and VMEM, the VMEM the blocks take, and "
        "the fixed cost of each grid step. Make the kernel move less data or take fewer, larger steps.",
    )

    # Causes of a mismatch, found by running a failed case once more with other garbage
    # in unwritten memory, another sentinel, or the parallel axes in order (issue 9).
    READ_BEFORE_WRITTEN = (
        "read-before-written", "read before it was written",
        "The kernel built on what an output or scratch ref held before anything was stored in it (the first "
        "write added to it, or mixed it in): a ref is not zero when a kernel starts, and on hardware it holds "
        "whatever was there before. Initialise it first, e.g. under @pl.when(k == 0) set "
        "acc_ref[...] = jnp.zeros_like(acc_ref) before the first +=.",
    )
    PADDING_DEPENDENT = (
        "padding-dependent", "depends on padding or unwritten memory",
        "Your result depends on padding or memory you never wrote: it changes when that memory holds "
        "other values. On hardware it holds finite garbage, not NaN, so scrubbing NaNs "
        "(jnp.nan_to_num, isnan tests) does not help. Mask by position instead: compare an iota plus "
        "the block's offset with the array size, and use jnp.where to replace what lies past the edge.",
    )
    NAN_ARITHMETIC = (
        "nan-arithmetic", "NaN from arithmetic",
        "This NaN is made by the kernel's own arithmetic, not read from padding: it stays when padding "
        "holds finite values. NaN comes from inf - inf, inf * 0 and 0 / 0: an exp that overflows "
        "because the maximum was not subtracted first, or a sum of exps that all underflowed to 0 "
        "because a running maximum started at 0 instead of -inf.",
    )
    NEVER_TRUE_WHEN = (
        "never-true-when", "store guarded by a condition never true",
        "Every store into this output sits under a pl.when whose condition was false at every grid "
        "point that visits the block, so the block was never written. Check the condition: the last "
        "step of an axis is pl.num_programs(axis) - 1, not pl.num_programs(axis).",
    )
    ORDER = (
        "order", "depends on the order of a parallel axis",
        "A 'parallel' grid axis promises that its steps are independent: they may run in any order, "
        "or on two cores at once. This kernel carries state from one step of that axis to the next, "
        "so it is right only in one order. Mark the axis 'arbitrary' in dimension_semantics, or make "
        "each step independent.",
    )

    # Kernels over several devices (the tpu-multichip target): remote copies, semaphores, handshakes.
    DEADLOCK = (
        "deadlock", "every device waits for ever",
        "Every device is waiting for something no device left running will send. A DMA wait ends when the "
        "bytes of the descriptor it was called on have arrived (the whole destination ref you gave it), a "
        "semaphore_wait when the count you asked for has been signalled. Check that each wait matches a copy "
        "or signal a neighbour really makes, of the same size, and that no device waits for more than it is sent.",
    )
    NO_HANDSHAKE = (
        "no-handshake", "copied to a device before the handshake",
        "A kernel with a collective_id gets no automatic barrier: a neighbour may not have entered the kernel "
        "yet, and a copy or signal that reaches it early hits memory it has not set up (on a TPU: corrupt data "
        "or a crash). Before the first copy or signal to a device, signal it on pltpu.get_barrier_semaphore() "
        "and wait until it has signalled you: pl.semaphore_wait(barrier, number of neighbours).",
    )
    SEMAPHORE_LEFT = (
        "semaphore-left", "semaphore not zero at the end",
        "Every semaphore must be back at zero when the kernel ends; on a TPU a kernel that leaves a count "
        "crashes. A count left over is a signal or a copy nobody waited for: wait once for every signal and "
        "every copy, on the device it arrives at, with the same semaphore.",
    )
    COPY_NOT_WAITED = (
        "copy-not-waited", "copy never waited for",
        "A started copy must be waited for before the kernel ends: the receiver waits for it to arrive "
        "(.wait_recv(), or .wait() on the same descriptor), the sender for it to leave (.wait_send()). "
        "Without the wait nothing says the data has landed, and the semaphore keeps its count.",
    )
    DEVICE_ID = (
        "device-id", "device id the mesh does not have",
        "device_id names a device by its coordinates on the mesh axes given to shard_map: {'x': i} on a "
        "mesh with one axis 'x', where i runs from 0 to lax.axis_size('x') - 1. Work neighbours out from "
        "lax.axis_index('x') with lax.rem, never from a fixed number of devices.",
    )
    COLLECTIVE_ID = (
        "collective-id", "barrier semaphore without a collective_id",
        "pltpu.get_barrier_semaphore() is the semaphore every device shares for handshakes, and it exists only "
        "in a pallas_call given compiler_params=pltpu.CompilerParams(collective_id=0). Without one, Pallas "
        "instead makes all devices wait for each other before the kernel starts.",
    )
    NO_OVERLAP = (
        "no-overlap", "send waited for before computing",
        "This puzzle grades overlap: while a block travels to the next device, the kernel should compute on "
        "the block it already has. Start the copy, do the matmul and store its result, and only then wait for "
        "the copy. A TPU has no reason to wait earlier, and waiting serialises the link and the MXU.",
    )

    # The Mosaic GPU chapter (issue 20): barriers, TMA copies and shared memory, rules of the hardware.
    BARRIER_STALL = (
        "barrier-stall", "barrier wait that can never finish",
        "A barrier_wait returns once the barrier has had num_arrivals arrivals in the phase it waits for: "
        "each copy_gmem_to_smem given the barrier is one arrival, each barrier_arrive another. Give the "
        "barrier as many arrivals as copies (num_arrivals), start every copy before its wait, wait once per "
        "phase, and make sure the warpgroup that should arrive does.",
    )
    BARRIER_PHASE = (
        "barrier-phase", "barrier phase completed unobserved",
        "A barrier counts phases: it completes one each time num_arrivals arrivals have come in, and each "
        "completion must be waited for before the next one completes. Use one barrier (or one slot of a "
        "barrier array) per buffer in flight, with num_arrivals equal to the copies it covers, and wait "
        "for a phase before starting the copies of the next.",
    )
    SMEM_READ_BEFORE_WAIT = (
        "smem-read-before-wait", "read before its copy's barrier",
        "A TMA copy into shared memory is asynchronous: until barrier_wait on the barrier the copy was "
        "given returns, the buffer may hold old or half-written data. Wait on the copy's barrier before "
        "the first line that reads (or writes) its destination.",
    )
    SMEM_UNCOMMITTED = (
        "smem-uncommitted", "TMA store of uncommitted shared memory",
        "The TMA engine does not see a warpgroup's ordinary stores to shared memory until they are "
        "committed: call plgpu.commit_smem() after the last store and before copy_smem_to_gmem.",
    )
    SMEM_SLOT_IN_USE = (
        "smem-slot-in-use", "copy into a buffer still being read",
        "A TMA copy may overwrite its destination as soon as it starts. Start it only into a buffer whose "
        "earlier contents nobody reads any more: end the reads with plgpu.commit_smem() before refilling "
        "the buffer, and across warpgroups wait for the consumer's 'empty' barrier first.",
    )
    TMA_STORE_UNWAITED = (
        "tma-store-unwaited", "TMA store not waited for",
        "copy_smem_to_gmem keeps reading its shared memory after it is issued. Call "
        "plgpu.wait_smem_to_gmem(0) before the kernel ends and before anything writes that buffer again.",
    )
    SMEM_UNFILLED = (
        "smem-unfilled", "shared memory read before anything filled it",
        "Shared memory holds garbage until a copy or a store fills it (NaN in the interpreter). Check that "
        "the copy into this buffer happens, into the same slot and rows that are read here.",
    )
    GPU_LOWERING = (
        "gpu-lowering", "would not compile for an NVIDIA GPU",
        "Mosaic GPU, the compiler for Hopper-class GPUs, rejects this kernel, though the interpreter ran it; "
        "the message names the rule it broke.",
    )
    GPU_PROGRAM_ID = (
        "gpu-program-id", "pl.program_id inside plgpu.kernel",
        "In a plgpu.kernel the grid axes have names (grid_names=...): read a block's index with "
        "jax.lax.axis_index(\"name\"), and the grid's size from the launcher. pl.program_id and "
        "pl.num_programs belong to pallas_call, and the GPU interpreter answers 0 for every block.",
    )
    WGMMA_IN_FLIGHT = (
        "wgmma-in-flight", "wgmma still reading a slot the pipeline refills",
        "wgmma_wait(n) lets n matrix multiplies run on after the pipeline body returns, still reading their "
        "shared-memory operands, while emit_pipeline refills the slot as soon as the body returns. Give the "
        "operands' BlockSpecs delay_release=n so the pipeline keeps each slot n steps longer (and "
        "max_concurrent_steps above n), or wait with wgmma_wait(0).",
    )

    def __init__(self, name: str, label: str, explanation: str) -> None:
        self.id = name
        self.label = label
        self.explanation = explanation

    @classmethod
    def by_id(cls, name: str) -> FindingKind:
        for kind in cls:
            if kind.id == name:
                return kind
        raise KeyError(name)

    @property
    def is_mismatch(self) -> bool:
        return self.id.startswith("mismatch-")

    @property
    def is_our_fault(self) -> bool:
        """Findings about pallas-puzzles itself: the check could not give a verdict."""
        return self is FindingKind.INTERNAL
