"""SDK IR module → LLVM module: one LLVM function per `tt.func`, plus the launcher entry for the kernel.

Entry ABI (csrc/launcher.cpp): `void NAME(void **args, i32 gx, i32 gy, i32 gz, i64 start, i64 end)` runs programs
with linear ids in [start, end); `args[i]` points to runtime argument i. Every `tt.func` body takes its parameters
followed by the program ids and grid size (x, y, z), so noinline helpers see the same `tl.program_id`.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Module
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options

from .context import LoweringContext
from .types import I1, I8, I32, I64, PTR, VOID, llvm_type, storage_type

PROGRAM_SUFFIX = ".program"


def _signature(func: O.Func) -> ir.FunctionType:
    ft = func.function_type
    params = [llvm_type(t) for t in ft.inputs] + [I32] * 6
    if not ft.results:
        ret: ir.Type = VOID
    elif len(ft.results) == 1:
        ret = llvm_type(ft.results[0])
    else:
        ret = ir.LiteralStructType([llvm_type(t) for t in ft.results])
    return ir.FunctionType(ret, params)


def lower_module(module: Module, kernel_name: str, rules: RuleTable, options: Options) -> ir.Module:
    llmod = ir.Module(name=kernel_name)
    funcs = [op for op in module.ops if isinstance(op, O.Func)]
    functions: dict[str, ir.Function] = {}
    for f in funcs:
        name = f.sym_name + (PROGRAM_SUFFIX if f.sym_name == kernel_name else "")
        fn = ir.Function(llmod, _signature(f), name=name)
        fn.linkage = "internal"
        functions[f.sym_name] = fn
    for f in funcs:
        fn = functions[f.sym_name]
        n = len(f.args)
        ctx = LoweringContext(llmod, fn, rules, options, list(fn.args[n:n + 3]), list(fn.args[n + 3:n + 6]),
                              functions)
        for a, v in zip(f.args, fn.args[:n]):
            ctx.values[a] = v
        ctx.lower_block(f.body)
        if not ctx.b.block.is_terminated:
            ctx.b.ret_void()
        ctx.finish()
    kernel = next(f for f in funcs if f.sym_name == kernel_name)
    functions[kernel_name].attributes.add("alwaysinline")
    _entry(llmod, kernel, functions[kernel_name], kernel_name)
    return llmod


def _entry(llmod: ir.Module, kernel: O.Func, program: ir.Function, name: str) -> None:
    fnty = ir.FunctionType(VOID, [PTR, I32, I32, I32, I64, I64])
    fn = ir.Function(llmod, fnty, name=name)
    args_ptr, gx, gy, gz, start, end = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    params = []
    for i, t in enumerate(kernel.function_type.inputs):
        slot = b.load(b.gep(args_ptr, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
        st = storage_type(t)
        v = b.load(slot, typ=st)
        params.append(b.icmp_unsigned("!=", v, ir.Constant(I8, 0)) if llvm_type(t) == I1 else v)
    loop = fn.append_basic_block("programs")
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_signed("<", start, end), loop, done)
    pre = b.block
    b.position_at_end(loop)
    lin = b.phi(I64, name="pid")
    lin.add_incoming(start, pre)
    gx64, gy64 = b.zext(gx, I64), b.zext(gy, I64)
    px = b.trunc(b.urem(lin, gx64), I32)
    rest = b.udiv(lin, gx64)
    py = b.trunc(b.urem(rest, gy64), I32)
    pz = b.trunc(b.udiv(rest, gy64), I32)
    b.call(program, [*params, px, py, pz, gx, gy, gz])
    nxt = b.add(lin, ir.Constant(I64, 1))
    lin.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, end), loop, done)
    b.position_at_end(done)
    b.ret_void()
