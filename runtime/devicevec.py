"""16-byte loads and stores for the unrolled map loops (codegen/parallel.py, ``vector_map``).

A lane that moves 16 bytes per instruction keeps four times the bytes of a 4-byte load in
flight, which a stage of a few warps per SM needs to stream (B4's compute tasks). On the GPU
each is one PTX instruction (``ld.global.v4.b32``, ``st.global.v2.b64`` ...) through a small
``@intrinsic``; the address must be a multiple of 16, and the elements of the index's last
dimension adjacent, which ``aligned16`` tells at run time (the loop falls back to its 4-byte
form where it is not: a view of a buffer may start anywhere). A group's local buffers move
with ``ld.shared``/``st.shared`` (``lds_v4`` ...). The index is an element's or a tuple.
Under the simulator they are plain element accesses and tuples.
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

else:
    from llvmlite import ir as llvm_ir
    from numba import cuda, types
    from numba.cuda.extending import intrinsic

    from gasync.runtime.order import _bits, _pointer, _reg, _unbits

    @intrinsic
    def _aligned16(typingctx, arr, idx):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty, idxty = signature.args
            ptr = _pointer(context, builder, aryty, idxty, *args)
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
                ptr = _pointer(context, builder, aryty, idxty, *args)
                w = aryty.dtype.bitwidth
                fty = llvm_ir.FunctionType(llvm_ir.LiteralStructType([llvm_ir.IntType(w)] * n), [ptr.type])
                regs = ", ".join(f"${k}" for k in range(n))
                cons = ",".join([f"={_reg(w)}"] * n) + ",l"
                if space == "shared":
                    text = _in_shared(f"${n}", f"ld.shared.v{n}.b{w} {{{regs}}}, [%sa];")
                else:
                    text = f"ld.global.v{n}.b{w} {{{regs}}}, [${n}];"
                asm = llvm_ir.InlineAsm(fty, text, cons, side_effect=True)
                raw = builder.call(asm, [ptr])
                vals = [_unbits(builder, builder.extract_value(raw, k), aryty.dtype) for k in range(n)]
                return context.make_tuple(builder, tup, vals)

            return tup(arr, idx), codegen

        return load

    def _vec_store(n, space="global"):  # type: ignore[no-untyped-def]
        @intrinsic
        def store(typingctx, arr, idx, vals):  # type: ignore[no-untyped-def]
            def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
                aryty, idxty, tupty = signature.args
                ptr = _pointer(context, builder, aryty, idxty, args[0], args[1])
                w = aryty.dtype.bitwidth
                items = [
                    _bits(context, builder, builder.extract_value(args[2], k), tupty[k], aryty.dtype) for k in range(n)
                ]
                fty = llvm_ir.FunctionType(llvm_ir.VoidType(), [ptr.type] + [llvm_ir.IntType(w)] * n)
                regs = ", ".join(f"${k + 1}" for k in range(n))
                cons = "l," + ",".join([_reg(w)] * n) + ",~{memory}"
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
            to = _pointer(context, builder, dty, ity, args[0], args[1])
            frm = _pointer(context, builder, sty, jty, args[2], args[3])
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
