"""Float narrowing in LLVM IR through the SDK's one rounding (`triton_backend_sdk.numerics`).

LLVM lowers `fptrunc` to bfloat to compiler-rt's `__truncsfbf2`, absent from the JIT's process (the kernel would not
link), or, on CPUs with AVX512-BF16, to an instruction that flushes subnormals to zero. Every narrowing to bf16 in
cpu_ref goes through `narrow` instead, which emits the SDK's integer rounding; other narrowings stay LLVM's `fptrunc`
(correct for f16 with F16C and for f32).
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.numerics import f32_to_bf16_bits

from .types import BF16, F32, I16, I32


class LLVMOps:
    """`IntOps` as llvmlite instructions on i32 (LLVM folds the constant parts)."""

    def __init__(self, b: ir.IRBuilder) -> None:
        self.b = b

    def const(self, v: int) -> ir.Value:
        return ir.Constant(I32, v)

    def and_(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.and_(a, c)

    def or_(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.or_(a, c)

    def add(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.add(a, c)

    def sub(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.sub(a, c)

    def shr(self, a: ir.Value, k: int) -> ir.Value:
        return self.b.lshr(a, ir.Constant(I32, k))

    def shl(self, a: ir.Value, k: int) -> ir.Value:
        return self.b.shl(a, ir.Constant(I32, k))

    def shrv(self, a: ir.Value, k: ir.Value) -> ir.Value:
        return self.b.lshr(a, k)

    def ugt(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.icmp_unsigned(">", a, c)

    def eq(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.icmp_unsigned("==", a, c)

    def select(self, c: ir.Value, a: ir.Value, d: ir.Value) -> ir.Value:
        return self.b.select(c, a, d)


def f32_to_bf16(b: ir.IRBuilder, x: ir.Value, rtz: bool = False) -> ir.Value:
    """An f32 value rounded to bf16 (nearest even, or toward zero)."""
    bits = f32_to_bf16_bits(LLVMOps(b), b.bitcast(x, I32), rtz)
    return b.bitcast(b.trunc(bits, I16), BF16)


def narrow(b: ir.IRBuilder, x: ir.Value, to: ir.Type) -> ir.Value:
    """`fptrunc x to to`, with bf16 results (from f32) rounded by the SDK's integer rounding."""
    if to == BF16:  # callers narrow f64 to f32 rounded to odd first where double rounding matters
        return f32_to_bf16(b, x if x.type == F32 else b.fptrunc(x, F32))
    return b.fptrunc(x, to)


def widen(b: ir.IRBuilder, x: ir.Value, to: ir.Type) -> ir.Value:
    """`fpext x to to`, a bf16 `x` widened through its bits (exact, NaN payloads kept): InstCombine rewrites
    `fptrunc(frem(fpext bfloat, ...)) to half` into a cast between the two 16-bit types, which aborts an LLVM built
    with assertions (llvmlite's) and is an invalid cast in any other (fuzz seed 303 kernel 792)."""
    if x.type != BF16:
        return b.fpext(x, to)
    f = b.bitcast(b.shl(b.zext(b.bitcast(x, I16), I32), ir.Constant(I32, 16)), F32)
    return f if to == F32 else b.fpext(f, to)


#: compiler-rt's f32 → bf16 routine, which LLVM calls for whatever bfloat narrowing it makes itself (a bfloat value
#: kept in a register is an f32 on CPUs without AVX512-BF16, so even a copy narrows); defined in every kernel module
LIBCALL = "__truncsfbf2"


def define_libcalls(module: ir.Module) -> None:
    """Define `__truncsfbf2` in `module` with the SDK's rounding, so that the kernel links without compiler-rt."""
    if LIBCALL in module.globals:
        return
    fn = ir.Function(module, ir.FunctionType(BF16, [F32]), name=LIBCALL)
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(f32_to_bf16(b, fn.args[0]))
