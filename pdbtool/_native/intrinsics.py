"""Low-level Numba intrinsics, plain functions usable from any ``@njit`` kernel.

* ``pdep``/``pext`` (BMI2, with a bit-loop fallback on CPUs without it, chosen once at import from the
  host CPU's features) and ``select_bit``: the j-th set bit of a mask, for unranking;
* ``popcount`` and ``trailing_zeros``: one instruction each;
* atomic OR, XOR and add on a uint64 word (LLVM ``atomicrmw``), for the parallel two-bit BFS and for
  handing out blocks of work to threads;
* ``prefetch``: a cache hint for an array element about to be read;
* ``load_u8``/``load_u64``: a load from a raw address, so that a kernel can read several tables through
  one array of addresses.
"""

from __future__ import annotations

import warnings

import numba
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import intrinsic

# Numba's SSA pass runs a pedantic self-check of variable scopes and, when an inlined overload (the search's
# heuristic hooks) trips it, prints a warning asking for a Numba bug report on the first compile.  The
# compiled code is unaffected (the tests check every kernel against exact oracles); users should not see it.
warnings.filterwarnings("ignore", category=NumbaIRAssumptionWarning)


def _host_has_bmi2() -> bool:
    try:
        import llvmlite.binding as llvm

        return "+bmi2" in llvm.get_host_cpu_features().flatten()
    except Exception:  # pragma: no cover - exotic platforms
        return False


HAS_BMI2 = _host_has_bmi2()


def _bmi2_intrinsic(llvm_name):
    def typer(typingctx, src, mask):
        sig = types.uint64(types.uint64, types.uint64)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            fnty = ir.FunctionType(i64, [i64, i64])
            fn = cgutils.get_or_insert_function(builder.module, fnty, llvm_name)
            a = context.cast(builder, args[0], signature.args[0], types.uint64)
            b = context.cast(builder, args[1], signature.args[1], types.uint64)
            return builder.call(fn, [a, b])

        return sig, codegen

    typer.__name__ = llvm_name.rsplit(".", 2)[-2]
    return intrinsic(typer)


_pdep_bmi2 = _bmi2_intrinsic("llvm.x86.bmi.pdep.64")
_pext_bmi2 = _bmi2_intrinsic("llvm.x86.bmi.pext.64")


def _bit_loop(deposit: bool):
    """``pdep`` (``deposit``) or ``pext`` as a loop over the set bits of the mask, for CPUs without BMI2: the
    i-th lowest set bit of the mask pairs with bit i of the packed side, ``deposit`` says which way bits go.
    ``deposit`` is a constant of the compiled function, so each loop has no branch on it."""

    @njit(inline="always")
    def loop(src, mask):
        result = numba.uint64(0)
        bit = numba.uint64(1)
        m = numba.uint64(mask)
        s = numba.uint64(src)
        while m:
            low = m & (~m + numba.uint64(1))
            if s & (bit if deposit else low):
                result |= low if deposit else bit
            m ^= low
            bit <<= numba.uint64(1)
        return result

    return loop


_pdep_loop = _bit_loop(True)
_pext_loop = _bit_loop(False)


# one instruction each on CPUs with BMI2, else the loops
_pdep, _pext = (_pdep_bmi2, _pext_bmi2) if HAS_BMI2 else (_pdep_loop, _pext_loop)


@njit(inline="always")
def deposit_bits(src, mask):
    """``pdep``: the low bits of ``src`` placed, in order, at the set bits of ``mask``."""
    return _pdep(numba.uint64(src), numba.uint64(mask))


@njit(inline="always")
def extract_bits(src, mask):
    """``pext``: the bits of ``src`` at the set bits of ``mask``, packed to the low end."""
    return _pext(numba.uint64(src), numba.uint64(mask))


@njit(inline="always")
def select_bit(j, mask):
    """The j-th (0-based) set bit of ``mask``, as a one-bit word."""
    return deposit_bits(numba.uint64(1) << numba.uint64(j), mask)


def _atomic_rmw_u64(op):
    """An intrinsic ``array[index] <op>= value`` as one atomic read-modify-write, returning the old word."""

    def typer(typingctx, array, index, value):
        if not (isinstance(array, types.Array) and array.dtype == types.uint64):
            return None
        sig = types.uint64(array, types.intp, types.uint64)

        def codegen(context, builder, signature, args):
            arr, idx, val = args
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, arr)
            idx = context.cast(builder, idx, signature.args[1], types.intp)
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx])
            val = context.cast(builder, val, signature.args[2], types.uint64)
            return builder.atomic_rmw(op, ptr, val, "monotonic")

        return sig, codegen

    typer.__name__ = f"atomic_{op}_u64"
    return intrinsic(typer)


atomic_or_u64 = _atomic_rmw_u64("or")
atomic_xor_u64 = _atomic_rmw_u64("xor")
atomic_add_u64 = _atomic_rmw_u64("add")


@intrinsic
def popcount(typingctx, value):
    """Number of set bits of a 64-bit word (LLVM ``ctpop``: one ``popcnt`` instruction)."""
    sig = types.int64(value)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.uint64)
        return builder.ctpop(v)

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, value):
    """Index of the lowest set bit of a nonzero 64-bit word (LLVM ``cttz``: one ``tzcnt``)."""
    sig = types.int64(value)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.uint64)
        return builder.cttz(v, ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Hint the CPU to fetch ``array[index]`` into the cache (LLVM ``llvm.prefetch``, read, high locality).

    Batching the random look-ups of a node's children behind prefetches lets their cache misses overlap.
    """
    if not isinstance(array, types.Array):
        return None
    sig = types.void(array, types.intp)

    def codegen(context, builder, signature, args):
        arr, idx = args
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, arr)
        idx = context.cast(builder, idx, signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


# --- loads from an absolute address (of a table payload the caller keeps alive) --------------------------

@intrinsic
def load_u8(typingctx, address):
    """The byte at an absolute address, as an int64: one kernel can read tables of several sizes and
    encodings through a plain int64 array of their addresses."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.PointerType(ir.IntType(8)))
        return builder.zext(builder.load(ptr), ir.IntType(64))

    return sig, codegen


@intrinsic
def load_u64(typingctx, address):
    """The 64-bit word at an absolute (8-byte aligned) address, as a uint64."""
    sig = types.uint64(types.int64)

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.PointerType(ir.IntType(64)))
        return builder.load(ptr)

    return sig, codegen
