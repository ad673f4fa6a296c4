"""mbarriers in a group's shared memory: the hand-off of a local channel's slot, lane by lane.

A local channel's ring (runtime/devicegroups.py) decides who takes which slot with its
sequence words, released and acquired by lane 0. Where a poll runs on all 32 lanes
(codegen/warppoll.py) every lane also passes each slot through two mbarriers, ``pub``
(the sender's 32 lanes arrive once the value and what it names are written; the
receiver's lanes wait for that phase) and ``freed`` (the receiver's lanes arrive once
they have read; the next sender's lanes wait). The sequence words alone order the memory
already (lane 0's acquire, then the warp's meeting); the barriers make that order one that
compute-sanitizer's racecheck follows (it follows barriers, warp meetings and mbarriers
each lane arrives at and waits on, not release/acquire: scripts/racecheck_probe.py,
bench/NOTES.md run 68), at a few instructions a hand-off.

Each barrier expects ``LANES`` arrivals a phase. ``passed(arr, i, parity)`` says whether the
phase of that parity has completed (PTX ``mbarrier.try_wait.parity``). When a hand-off's
waiter looks (lap ``k`` of its slot: the sequence word said the slot is its), the barrier has
completed ``k`` or ``k + 1`` phases, never fewer (the hand-off of lap ``k - 1`` waited for
its own phase before the slot came round) nor more (lap ``k + 1``'s needs this one first), so
one bit of the phase tells which. On the GPU each operation is one PTX instruction on the
word's shared-window address (``arr`` is a group's ring, a shared array, or a view of the
block's dynamic shared memory); under the simulator a word holds phases * 64 + arrivals,
changed under runtime/order.py's one lock.
"""

from __future__ import annotations

from numba import config

from gasync.runtime.order import INLINE

LANES = 32  # arrivals a phase: one a lane of the warp that hands the slot on

if config.ENABLE_CUDASIM:
    from gasync.runtime.order import _lock

    def init(arr, i):  # type: ignore[no-untyped-def]
        """``arr[i]`` made a barrier at its first phase, no arrival yet."""
        arr[i] = 0

    def inval(arr, i):  # type: ignore[no-untyped-def]
        """``arr[i]`` no longer a barrier (its memory free for another use)."""
        arr[i] = 0

    def arrive(arr, i):  # type: ignore[no-untyped-def]
        """One arrival (a release of what this lane wrote and read before it)."""
        with _lock:
            v = arr[i] + 1
            arr[i] = (v // 64 + 1) * 64 if v % 64 == LANES else v

    def passed(arr, i, parity):  # type: ignore[no-untyped-def]
        """Whether the phase of ``parity`` has completed (an acquire where it has)."""
        return (arr[i] // 64) % 2 != parity

else:
    from llvmlite import ir as llvm_ir
    from numba import types
    from numba.cuda.extending import intrinsic

    from gasync.runtime import ptxops as ptx

    def _call(builder, ret, operands, op, constraints):  # type: ignore[no-untyped-def]
        """``op``, its barrier's shared-window address an operand (runtime/ptxops.py, shared_address)."""
        text = f"{{ .reg .pred %p; {op} }}"
        fty = llvm_ir.FunctionType(ret, [v.type for v in operands])
        return builder.call(llvm_ir.InlineAsm(fty, text, constraints, side_effect=True), operands)

    def _barrier(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """The shared-window address of barrier ``arr[i]`` (the first two arguments)."""
        bar = ptx.pointer(context, builder, signature.args[0], signature.args[1], args[0], args[1])
        return ptx.shared_address(builder, bar)

    def barrier_op(op):  # type: ignore[no-untyped-def]
        """An intrinsic ``(arr, i)`` that runs ``op`` on barrier ``arr[i]`` (``[$0]`` in ``op``)."""

        @intrinsic
        def on_barrier(typingctx, arr, i):  # type: ignore[no-untyped-def]
            def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
                _call(builder, llvm_ir.VoidType(), [_barrier(context, builder, signature, args)], op, "r,~{memory}")
                return context.get_dummy_value()

            return types.void(arr, i), codegen

        return on_barrier

    _init = barrier_op(f"mbarrier.init.shared::cta.b64 [$0], {LANES};")
    _inval = barrier_op("mbarrier.inval.shared::cta.b64 [$0];")
    _arrive = barrier_op("{ .reg .b64 %st; mbarrier.arrive.shared::cta.b64 %st, [$0]; }")

    @intrinsic
    def _passed(typingctx, arr, i, parity):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            bar = _barrier(context, builder, signature, args)
            par = context.cast(builder, args[2], signature.args[2], types.uint32)
            op = "mbarrier.try_wait.parity.shared::cta.b64 %p, [$1], $2; selp.u32 $0, 1, 0, %p;"
            done = _call(builder, llvm_ir.IntType(32), [bar, par], op, "=r,r,r,~{memory}")
            return builder.icmp_unsigned("!=", done, llvm_ir.Constant(llvm_ir.IntType(32), 0))

        return types.boolean(arr, i, parity), codegen

    @INLINE
    def init(arr, i):  # type: ignore[no-untyped-def]
        _init(arr, i)

    @INLINE
    def inval(arr, i):  # type: ignore[no-untyped-def]
        _inval(arr, i)

    @INLINE
    def arrive(arr, i):  # type: ignore[no-untyped-def]
        _arrive(arr, i)

    @INLINE
    def passed(arr, i, parity):  # type: ignore[no-untyped-def]
        return _passed(arr, i, parity)


@INLINE
def wait(arr, i, parity):  # type: ignore[no-untyped-def]
    """This lane waits until the phase of ``parity`` of barrier ``arr[i]`` has completed."""
    while not passed(arr, i, parity):
        pass
