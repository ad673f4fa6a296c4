"""16-byte loads and stores for the unrolled map loops (codegen/parallel.py, ``vector_map``).

A lane that moves 16 bytes per instruction keeps four times the bytes of a 4-byte load in
flight, which a stage of a few warps per SM needs to stream (B4's compute tasks). On the GPU
each is one PTX instruction (``ld.global.v4.b32``, ``st.global.v2.b64`` ...) through a small
``@intrinsic``; the address must be a multiple of 16, and the elements of the index's last
dimension adjacent, which ``aligned16`` tells at run time (the loop falls back to its 4-byte
form where it is not: a view of a buffer may start anywhere). A group's local buffers move
with ``ld.shared``/``st.shared`` (``lds_v4`` ...). The index is an element's or a tuple.
Under the simulator they are plain element accesses and tuples. A copy map into a local buffer
may instead be one ``cp.async.bulk`` by the copy engine (``bulk_copy``, on an mbarrier of the
warp's; codegen/groups.py ``BULK_COPY``, off: bench/NOTES.md run 55).
"""

from __future__ import annotations

from numba import config

SIM = bool(config.ENABLE_CUDASIM)
# the alignment of a group's local buffers (codegen/groups.py): a 16-byte line, where a
# static shared array of 4-byte elements would get 4 (the simulator takes none)
LOCAL_ALIGN = None if SIM else 16

if SIM:

    def _at(i, j):  # type: ignore[no-untyped-def]
        """The index ``j`` elements on from ``i`` along its last dimension."""
        return (*i[:-1], i[-1] + j) if isinstance(i, tuple) else i + j

    def aligned16(arr, i):  # type: ignore[no-untyped-def]
        """Whether ``arr[i]`` starts a 16-byte line (the simulator: its offset in the array)
        and its last dimension's elements are adjacent."""
        ix = i if isinstance(i, tuple) else (i,)
        offset = sum(int(k) * st for k, st in zip(ix, arr.strides, strict=True))
        return offset % 16 == 0 and arr.strides[-1] == arr.dtype.itemsize

    def rows16(arr):  # type: ignore[no-untyped-def]
        """Whether ``arr``'s rows (its next-to-last dimension) start 16-byte multiples apart."""
        return arr.strides[-2] % 16 == 0

    def ld_v4(arr, i):  # type: ignore[no-untyped-def]
        return (arr[i], arr[_at(i, 1)], arr[_at(i, 2)], arr[_at(i, 3)])

    def ld_v2(arr, i):  # type: ignore[no-untyped-def]
        return (arr[i], arr[_at(i, 1)])

    def st_v4(arr, i, v):  # type: ignore[no-untyped-def]
        arr[i], arr[_at(i, 1)], arr[_at(i, 2)], arr[_at(i, 3)] = v

    def st_v2(arr, i, v):  # type: ignore[no-untyped-def]
        arr[i], arr[_at(i, 1)] = v

    # a group's local buffers (shared memory) are arrays like the others under the simulator
    lds_v4, lds_v2, sts_v4, sts_v2 = ld_v4, ld_v2, st_v4, st_v2

    def cp_async16(dst, i, src, j):  # type: ignore[no-untyped-def]
        """16 bytes from ``src[j]`` on to ``dst[i]`` on (the GPU: one ``cp.async``)."""
        for k in range(16 // dst.dtype.itemsize):
            dst[_at(i, k)] = src[_at(j, k)]

    def cp_async_wait():  # type: ignore[no-untyped-def]
        return None

    def bulk_copy_works():  # type: ignore[no-untyped-def]
        return True

    def mbar_init(mb, slot):  # type: ignore[no-untyped-def]
        return None

    def bulk_copy(dst, i, src, j, nbytes, mb, slot):  # type: ignore[no-untyped-def]
        """``nbytes`` from ``src[j]`` on to ``dst[i]`` on along their last dimensions (the GPU:
        one copy by the bulk copy engine, complete on return)."""
        for k in range(nbytes // dst.dtype.itemsize):
            dst[_at(i, k)] = src[_at(j, k)]

else:
    from llvmlite import ir as llvm_ir
    from numba import cuda, types
    from numba.cuda.extending import intrinsic

    from gasync.runtime import ptxops as ptx

    @intrinsic
    def _aligned16(typingctx, arr, idx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty, idxty = signature.args
            ptr = ptx.pointer(context, builder, aryty, idxty, *args)
            low = builder.and_(builder.ptrtoint(ptr, llvm_ir.IntType(64)), llvm_ir.Constant(llvm_ir.IntType(64), 15))
            return builder.icmp_unsigned("==", low, llvm_ir.Constant(llvm_ir.IntType(64), 0))

        return types.boolean(arr, idx), codegen

    def _in_shared(addr, op):  # type: ignore[no-untyped-def]
        """PTX for ``op`` at ``[%sa]``: the address of a group's local buffer is generic
        (runtime/order.py), and a shared-memory move takes its shared-window form."""
        return f"{{ .reg .u64 %sa; cvta.to.shared.u64 %sa, {addr}; {op} }}"

    def _vec_load(n, space="global"):  # type: ignore[no-untyped-def]
        @intrinsic
        def load(typingctx, arr, idx):  # type: ignore[no-untyped-def]
            tup = types.UniTuple(arr.dtype, n)

            def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
                aryty, idxty = signature.args
                ptr = ptx.pointer(context, builder, aryty, idxty, *args)
                w = aryty.dtype.bitwidth
                fty = llvm_ir.FunctionType(llvm_ir.LiteralStructType([llvm_ir.IntType(w)] * n), [ptr.type])
                regs = ", ".join(f"${k}" for k in range(n))
                cons = ",".join([f"={ptx.reg(w)}"] * n) + ",l"
                if space == "shared":
                    text = _in_shared(f"${n}", f"ld.shared.v{n}.b{w} {{{regs}}}, [%sa];")
                else:
                    text = f"ld.global.v{n}.b{w} {{{regs}}}, [${n}];"
                asm = llvm_ir.InlineAsm(fty, text, cons, side_effect=True)
                raw = builder.call(asm, [ptr])
                vals = [ptx.unbits(builder, builder.extract_value(raw, k), aryty.dtype) for k in range(n)]
                return context.make_tuple(builder, tup, vals)

            return tup(arr, idx), codegen

        return load

    def _vec_store(n, space="global"):  # type: ignore[no-untyped-def]
        @intrinsic
        def store(typingctx, arr, idx, vals):  # type: ignore[no-untyped-def]
            def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
                aryty, idxty, tupty = signature.args
                ptr = ptx.pointer(context, builder, aryty, idxty, args[0], args[1])
                w = aryty.dtype.bitwidth
                parts = [builder.extract_value(args[2], k) for k in range(n)]
                items = [ptx.bits(context, builder, parts[k], tupty[k], aryty.dtype) for k in range(n)]
                fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [ptr.type] + [llvm_ir.IntType(w)] * n)
                regs = ", ".join(f"${k + 1}" for k in range(n))
                cons = "l," + ",".join([ptx.reg(w)] * n) + ",~{memory}"
                if space == "shared":
                    text = _in_shared("$0", f"st.shared.v{n}.b{w} [%sa], {{{regs}}};")
                else:
                    text = f"st.global.v{n}.b{w} [$0], {{{regs}}};"
                asm = llvm_ir.InlineAsm(fty, text, cons, side_effect=True)
                builder.call(asm, [ptr, *items])
                return context.get_dummy_value()

            return types.void(arr, idx, vals), codegen

        return store

    _ld_v4, _ld_v2 = _vec_load(4), _vec_load(2)
    _st_v4, _st_v2 = _vec_store(4), _vec_store(2)
    # a group's local buffers (shared memory): the intrinsics themselves, called from device code
    lds_v4, lds_v2 = _vec_load(4, "shared"), _vec_load(2, "shared")
    sts_v4, sts_v2 = _vec_store(4, "shared"), _vec_store(2, "shared")

    @intrinsic
    def cp_async16(typingctx, dst, i, src, j):  # type: ignore[no-untyped-def]
        """16 bytes from global ``src[j]`` on to shared ``dst[i]`` on, without passing through
        registers: ``cp.async.cg`` (sm_80 on), complete only at ``cp_async_wait``. Both
        addresses start 16-byte lines (``aligned16``)."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            dty, ity, sty, jty = signature.args
            to = ptx.pointer(context, builder, dty, ity, args[0], args[1])
            frm = ptx.pointer(context, builder, sty, jty, args[2], args[3])
            fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [to.type, frm.type])
            text = _in_shared("$0", "cp.async.cg.shared.global [%sa], [$1], 16;")
            asm = llvm_ir.InlineAsm(fty, text, "l,l,~{memory}", side_effect=True)
            builder.call(asm, [to, frm])
            return context.get_dummy_value()

        return types.void(dst, i, src, j), codegen

    @intrinsic
    def cp_async_wait(typingctx):  # type: ignore[no-untyped-def]
        """Until every ``cp_async16`` of this thread has landed in shared memory
        (``cp.async.wait_all``); the warp's lanes then meet (``warp_sync``), which orders them
        before lane 0 publishes the stage."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [])
            builder.call(llvm_ir.InlineAsm(fty, "cp.async.wait_all;", "~{memory}", side_effect=True), [])
            return context.get_dummy_value()

        return types.void(), codegen

    @cuda.jit(device=True, inline=True)
    def aligned16(arr, i):  # type: ignore[no-untyped-def]
        """Whether ``arr[i]`` starts a 16-byte line and its last dimension's elements are adjacent."""
        return _aligned16(arr, i) and arr.strides[-1] == arr.itemsize

    @cuda.jit(device=True, inline=True)
    def rows16(arr):  # type: ignore[no-untyped-def]
        """Whether ``arr``'s rows (its next-to-last dimension) start 16-byte multiples apart: a
        tile's 16-byte moves then start lines in every row if they do in its first."""
        return arr.strides[len(arr.shape) - 2] % 16 == 0

    @cuda.jit(device=True, inline=True)
    def ld_v4(arr, i):  # type: ignore[no-untyped-def]
        """``arr[i:i + 4]`` of 4-byte elements, one 16-byte load (``aligned16``)."""
        return _ld_v4(arr, i)

    @cuda.jit(device=True, inline=True)
    def ld_v2(arr, i):  # type: ignore[no-untyped-def]
        """``arr[i:i + 2]`` of 8-byte elements, one 16-byte load."""
        return _ld_v2(arr, i)

    @cuda.jit(device=True, inline=True)
    def st_v4(arr, i, v):  # type: ignore[no-untyped-def]
        _st_v4(arr, i, v)

    @cuda.jit(device=True, inline=True)
    def st_v2(arr, i, v):  # type: ignore[no-untyped-def]
        _st_v2(arr, i, v)

    def bulk_copy_works():  # type: ignore[no-untyped-def]
        """Whether this process's device has the bulk copy engine (``cp.async.bulk``, sm_90 on):
        the generated module reads it once, as a constant (``BULK_COPY``). Without a driver
        (PTX compiled offline, scripts/ptx_check.py) the target is sm_90."""
        try:
            return cuda.get_current_device().compute_capability >= (9, 0)
        except cuda.CudaSupportError:
            return True

    def _shared_asm(builder, ret, operands, text, constraints):  # type: ignore[no-untyped-def]
        fty = llvm_ir.FunctionType(ret, [v.type for v in operands])
        return builder.call(llvm_ir.InlineAsm(fty, text, constraints, side_effect=True), operands)

    @intrinsic
    def _mbar_init(typingctx, mb, slot):  # type: ignore[no-untyped-def]
        """``mb[slot]``, a shared word, made an mbarrier that one arrival (with its bytes)
        completes; the fence makes the initialisation visible to the copy engine."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            bar = ptx.pointer(context, builder, *signature.args, *args)
            text = _in_shared("$0", "mbarrier.init.shared::cta.b64 [%sa], 1; fence.mbarrier_init.release.cluster;")
            _shared_asm(builder, llvm_ir.VoidType(), [bar], text, "l,~{memory}")
            return context.get_dummy_value()

        return types.void(mb, slot), codegen

    @intrinsic
    def _bulk_start(typingctx, dst, i, src, j, nbytes, mb, slot):  # type: ignore[no-untyped-def]
        """Starts the copy of ``nbytes`` (a multiple of 16, both ends 16-byte aligned) from global
        ``src[j]`` on to shared ``dst[i]`` on by the bulk copy engine, its completion counted by
        the mbarrier ``mb[slot]``; returns the barrier's phase token for ``_mbar_done``. The proxy
        fence first orders the memory this thread has written or seen before the engine's
        accesses (a local buffer written by ordinary stores, a buffer another task wrote)."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            dty, ity, sty, jty, nty, mty, kty = signature.args
            to = ptx.pointer(context, builder, dty, ity, args[0], args[1])
            frm = ptx.pointer(context, builder, sty, jty, args[2], args[3])
            bar = ptx.pointer(context, builder, mty, kty, args[5], args[6])
            size = context.cast(builder, args[4], nty, types.uint32)
            text = (
                "{ .reg .u64 %sd, %sm; cvta.to.shared.u64 %sd, $1; cvta.to.shared.u64 %sm, $4; fence.proxy.async; "
                "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [%sm], $3; "
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%sd], [$2], $3, [%sm]; }"
            )
            return _shared_asm(builder, llvm_ir.IntType(64), [to, frm, size, bar], text, "=l,l,l,r,l,~{memory}")

        return types.int64(dst, i, src, j, nbytes, mb, slot), codegen

    @intrinsic
    def _mbar_done(typingctx, mb, slot, token):  # type: ignore[no-untyped-def]
        """Whether the phase of ``mb[slot]`` that ``token`` names has completed (``try_wait``,
        which waits a while in hardware before it says no); acquire: the copy's bytes are then
        visible to this thread."""

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            bar = ptx.pointer(context, builder, signature.args[0], signature.args[1], args[0], args[1])
            text = (
                "{ .reg .u64 %sa; .reg .pred %p; cvta.to.shared.u64 %sa, $1; "
                "mbarrier.try_wait.shared::cta.b64 %p, [%sa], $2; selp.u32 $0, 1, 0, %p; }"
            )
            done = _shared_asm(builder, llvm_ir.IntType(32), [bar, args[2]], text, "=r,l,l,~{memory}")
            return builder.icmp_unsigned("!=", done, llvm_ir.Constant(llvm_ir.IntType(32), 0))

        return types.boolean(mb, slot, token), codegen

    @cuda.jit(device=True, inline=True)
    def mbar_init(mb, slot):  # type: ignore[no-untyped-def]
        _mbar_init(mb, slot)

    @cuda.jit(device=True, inline=True)
    def bulk_copy(dst, i, src, j, nbytes, mb, slot):  # type: ignore[no-untyped-def]
        """``nbytes`` from global ``src[j]`` on to shared ``dst[i]`` on: one ``cp.async.bulk``
        that the copy engine runs, waited for on this warp's mbarrier ``mb[slot]``."""
        token = _bulk_start(dst, i, src, j, nbytes, mb, slot)
        while not _mbar_done(mb, slot, token):
            pass
