"""One PTX instruction for a memory access with a named order: the builders of runtime/order.py's
intrinsics (GPU only: Numba's simulator runs Python, and order.py gives it plain accesses).

Each builder returns a Numba ``@intrinsic`` whose code is one inline-asm instruction on the
address of an array element: ``load(sem, scope)`` (``ld.<sem>.<scope>``), ``store``, ``rmw(op,
sem, scope)`` (``atom``: the old value back), ``cas``, ``read`` (an atomic read: a compare-and-swap
of 0 for 0, which changes no word), ``fence``.
A scope of ``cta.shared`` takes the generic address of a shared-memory word to its 32-bit
shared-window form (``shared_address``: an ``addrspacecast`` NVVM sees and shares among an
array's accesses) and names the state space: a generic access is one the hardware must place
first, and a generic ``atom`` a branch per state space the address might be in (bench/NOTES.md,
twenty-seventh and twenty-ninth sessions). ``pointer``, ``shared_address``, ``bits``, ``unbits``
and ``reg`` serve other intrinsics too (runtime/devicevec.py, devicembar.py).
"""

from __future__ import annotations

from llvmlite import ir as llvm_ir
from numba import types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic


def pointer(context, builder, aryty, idxty, ary_val, idx_val):  # type: ignore[no-untyped-def]
    """The address of ``ary[idx]`` (an index or a tuple of them), unchecked."""
    ary = context.make_array(aryty)(context, builder, ary_val)
    if isinstance(idxty, types.BaseTuple):
        parts = cgutils.unpack_tuple(builder, idx_val, count=len(idxty))
        inds = [context.cast(builder, v, t, types.intp) for v, t in zip(parts, idxty, strict=True)]
    else:
        inds = [context.cast(builder, idx_val, idxty, types.intp)]
    return cgutils.get_item_pointer(context, builder, aryty, ary, inds, wraparound=False)


def bits(context, builder, value, fromty, dtype):  # type: ignore[no-untyped-def]
    """``value`` as the integer bits of one ``dtype`` word."""
    v = context.cast(builder, value, fromty, dtype)
    width = dtype.bitwidth
    return builder.bitcast(v, llvm_ir.IntType(width)) if isinstance(dtype, types.Float) else v


def unbits(builder, raw, dtype):  # type: ignore[no-untyped-def]
    """The integer bits ``raw`` as a ``dtype`` value."""
    return (
        builder.bitcast(raw, llvm_ir.DoubleType() if dtype.bitwidth == 64 else llvm_ir.FloatType())
        if isinstance(dtype, types.Float)
        else raw
    )


def reg(width):  # type: ignore[no-untyped-def]
    """The inline-asm constraint of a register of ``width`` bits."""
    return "r" if width == 32 else "l"


def shared_address(builder, ptr):  # type: ignore[no-untyped-def]
    """The 32-bit shared-window address of ``ptr``, a generic pointer into the block's shared memory:
    an ``addrspacecast`` NVVM sees (so that one ``cvta.to.shared`` of an array serves each of its
    accesses, where one inside every instruction's asm was recomputed each time) and its low word."""
    pointee = ptr.type.pointee
    shared = builder.addrspacecast(ptr, llvm_ir.PointerType(pointee, addrspace=3))
    return builder.ptrtoint(shared, llvm_ir.IntType(32))


def on_shared(scope, builder, ptr):  # type: ignore[no-untyped-def]
    """The instruction's address operand and its constraint: ``ptr`` itself (``l``), or, for the scope
    ``cta.shared`` (a generic address of a word of the block's shared memory), its shared-window
    address (``r``) for an instruction that names the state space (``.cta.shared::cta``: one LDS,
    STS or ATOMS, where a generic access is one the hardware must place first, and a generic
    ``atom`` a branch per state space)."""
    if scope == "cta.shared":
        return "cta.shared::cta", shared_address(builder, ptr), "r"
    return scope, ptr, "l"


def load(sem, scope="gpu.global"):  # type: ignore[no-untyped-def]
    """``ld.<sem>.<scope>`` of ``arr[idx]``."""

    @intrinsic
    def ld(typingctx, arr, idx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty, idxty = signature.args
            space, addr, a = on_shared(scope, builder, pointer(context, builder, aryty, idxty, *args))
            w = aryty.dtype.bitwidth
            fty = llvm_ir.FunctionType(llvm_ir.IntType(w), [addr.type])
            asm = llvm_ir.InlineAsm(fty, f"ld.{sem}.{space}.b{w} $0, [$1];", f"={reg(w)},{a}", side_effect=True)
            return unbits(builder, builder.call(asm, [addr]), aryty.dtype)

        return arr.dtype(arr, idx), codegen

    return ld


def store(sem, scope="gpu.global"):  # type: ignore[no-untyped-def]
    """``st.<sem>.<scope>`` of ``value`` into ``arr[idx]``."""

    @intrinsic
    def st(typingctx, arr, idx, value):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty, idxty, valty = signature.args
            space, addr, a = on_shared(scope, builder, pointer(context, builder, aryty, idxty, args[0], args[1]))
            w = aryty.dtype.bitwidth
            v = bits(context, builder, args[2], valty, aryty.dtype)
            fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [addr.type, llvm_ir.IntType(w)])
            text, cons = f"st.{sem}.{space}.b{w} [$0], $1;", f"{a},{reg(w)},~{{memory}}"
            asm = llvm_ir.InlineAsm(fty, text, cons, side_effect=True)
            builder.call(asm, [addr, v])
            return context.get_dummy_value()

        return types.void(arr, idx, value), codegen

    return st


def rmw_codegen(op, sem, n_vals, scope="gpu.global"):  # type: ignore[no-untyped-def]
    """The code of ``atom.<sem>.<scope>.<op>`` with ``n_vals`` values, returning the old word."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty, idxty, *valtys = signature.args
        space, addr, a = on_shared(scope, builder, pointer(context, builder, aryty, idxty, args[0], args[1]))
        w = aryty.dtype.bitwidth
        vs = [bits(context, builder, v, t, aryty.dtype) for v, t in zip(args[2:], valtys, strict=True)]
        kind = f"{op}.b{w}" if op in ("cas", "exch") else f"{op}.u{w}"
        operands = ", ".join(f"${k + 2}" for k in range(n_vals))
        fty = llvm_ir.FunctionType(llvm_ir.IntType(w), [addr.type] + [llvm_ir.IntType(w)] * n_vals)
        cons = f"={reg(w)},{a}," + ",".join(reg(w) for _ in range(n_vals)) + ",~{memory}"
        text = f"atom.{sem}.{space}.{kind} $0, [$1], {operands};"
        return unbits(
            builder, builder.call(llvm_ir.InlineAsm(fty, text, cons, side_effect=True), [addr, *vs]), aryty.dtype
        )

    return codegen


def rmw(op, sem, scope="gpu.global"):  # type: ignore[no-untyped-def]
    """``atom.<sem>.<scope>.<op>`` of one value, returning the old one."""

    @intrinsic
    def atom(typingctx, arr, idx, value):  # type: ignore[no-untyped-def]
        return arr.dtype(arr, idx, value), rmw_codegen(op, sem, 1, scope)

    return atom


def cas(sem, scope="gpu.global"):  # type: ignore[no-untyped-def]
    """``atom.<sem>.<scope>.cas``: returns the old value."""

    @intrinsic
    def atom(typingctx, arr, idx, old, new):  # type: ignore[no-untyped-def]
        return arr.dtype(arr, idx, old, new), rmw_codegen("cas", sem, 2, scope)

    return atom


def read(sem, scope="cta.shared"):  # type: ignore[no-untyped-def]
    """An atomic read of ``arr[idx]``: a compare-and-swap of 0 for 0 changes no word and returns it
    (one ATOMS.CAS.64 on shared memory, where a 64-bit OR is a loop of them)."""

    @intrinsic
    def atom(typingctx, arr, idx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            zero = context.get_constant(signature.return_type, 0)
            sig = signature.return_type(*signature.args, signature.return_type, signature.return_type)
            return rmw_codegen("cas", sem, 2, scope)(context, builder, sig, [*args, zero, zero])

        return arr.dtype(arr, idx), codegen

    return atom


def fence(asm):  # type: ignore[no-untyped-def]
    """The fence ``asm`` (its whole PTX text)."""

    @intrinsic
    def fn(typingctx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [])
            builder.call(llvm_ir.InlineAsm(fty, asm, "~{memory}", side_effect=True), [])
            return context.get_dummy_value()

        return types.void(), codegen

    return fn
