"""SDK IR module → LLVM module: one LLVM function per `tt.func`, plus the launcher entry for the kernel.

Entry ABI (csrc/launcher.cpp): `void NAME(void **args, i32 gx, i32 gy, i32 gz, i64 start, i64 end)` runs programs
with linear ids in [start, end); `args[i]` points to runtime argument i. Every `tt.func` body takes its parameters
followed by the program ids and grid size (x, y, z), so noinline helpers see the same `tl.program_id`.

A kernel that may fail a `tt.assert` takes one more, hidden argument after its runtime arguments: `args[n]` points
to the address of this launch's assert state (see `debug.py`; the driver, through `sdk/host_asserts.py`, passes a fresh one per
launch). Every function that may fail takes that pointer as a hidden last parameter. Once an assertion has failed,
the entry starts no further programs, and a caller returns as soon as a callee that may fail has failed.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.analysis.streaming_stores import launch_streaming_stores, streaming_stores
from triton_backend_sdk.analysis.tile_model import CACHE_LINE
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Module
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options

from . import operand_cache
from .context import LoweringContext
from .control import lower_blocks
from .numerics import define_libcalls
from .types import I1, I8, I32, I64, PTR, VOID, llvm_type, storage_type

PROGRAM_SUFFIX = ".program"


def _signature(func: O.Func, fails: bool, cache: bool = False) -> ir.FunctionType:
    ft = func.function_type
    params = [llvm_type(t) for t in ft.inputs] + [I32] * 6 + ([PTR] if fails else []) + ([PTR] if cache else [])
    if not ft.results:
        ret: ir.Type = VOID
    elif len(ft.results) == 1:
        ret = llvm_type(ft.results[0])
    else:
        ret = ir.LiteralStructType([llvm_type(t) for t in ft.results])
    return ir.FunctionType(ret, params)


def may_fail(funcs: list[O.Func]) -> set[str]:
    """Names of the functions that can fail an assertion, directly or through a call."""
    calls = {f.sym_name: {op.callee for op in f.walk() if isinstance(op, O.Call)} for f in funcs}
    failing = {f.sym_name for f in funcs if any(isinstance(op, O.Assert) for op in f.walk())}
    grown = True
    while grown:
        more = {name for name, callees in calls.items() if callees & failing} - failing
        failing |= more
        grown = bool(more)
    return failing


def kernel_may_fail(module: Module, kernel_name: str) -> bool:
    """Whether the kernel's entry takes the hidden assert-state argument (the driver then passes one per launch)."""
    return kernel_name in may_fail([op for op in module.ops if isinstance(op, O.Func)])


def lower_module(
    module: Module, kernel_name: str, rules: RuleTable, options: Options, target: TargetDescriptor | None = None
) -> ir.Module:
    """LLVM IR of `module`'s kernel for `target` (the compile path's descriptor; None: this host's)."""
    llmod = ir.Module(name=kernel_name)
    funcs = [op for op in module.ops if isinstance(op, O.Func)]
    failing = may_fail(funcs)
    kernel = next(f for f in funcs if f.sym_name == kernel_name)
    cache_plan = operand_cache.plan(kernel) if options.reuse_dot_operands else None
    streams = False
    functions: dict[str, ir.Function] = {}
    for f in funcs:
        name = f.sym_name + (PROGRAM_SUFFIX if f.sym_name == kernel_name else "")
        sig = _signature(f, f.sym_name in failing, f is kernel and cache_plan is not None)
        fn = ir.Function(llmod, sig, name=name)
        fn.linkage = "internal"
        functions[f.sym_name] = fn
    for f in funcs:
        fn = functions[f.sym_name]
        n = len(f.args)
        ctx = LoweringContext(
            llmod, fn, rules, options, list(fn.args[n : n + 3]), list(fn.args[n + 3 : n + 6]), functions, target
        )
        ctx.may_fail = failing
        if f.sym_name == kernel_name:
            others = [g for g in funcs if g is not f]
            ctx.streaming_stores = streaming_stores(f, others)
            ctx.launch_streaming_stores = launch_streaming_stores(f, others)
        if f.sym_name in failing:
            ctx.assert_state = fn.args[n + 6]
        if f is kernel and cache_plan is not None:
            ctx.operand_cache = fn.args[-1]
            ctx.cached_operands = dict(cache_plan.operands)
        for a, v in zip(f.args, fn.args[:n]):
            ctx.values[a] = v
        if len(f.regions[0].blocks) > 1:
            lower_blocks(ctx, f.regions[0].blocks)
        else:
            ctx.lower_block(f.body)
        if not ctx.b.block.is_terminated:
            ctx.b.ret_void()
        ctx.finish()
        streams |= ctx.streams
    functions[kernel_name].attributes.add("alwaysinline")
    _entry(llmod, kernel, functions[kernel_name], kernel_name, kernel_name in failing, streams, cache_plan)
    define_libcalls(llmod)
    return llmod


def _entry(
    llmod: ir.Module,
    kernel: O.Func,
    program: ir.Function,
    name: str,
    asserts: bool,
    streams: bool = False,
    cache_plan: operand_cache.OperandCachePlan | None = None,
) -> None:
    """The launcher's entry: programs [start, end) of the grid in order. `streams`: the programs made
    non-temporal stores, which are weakly ordered; a seq_cst fence after the last one orders them before the worker
    reports the range done (x86: mfence or a locked instruction, either drains the write-combining buffers).
    `cache_plan`: the programs share a block of kept dot operands (operand_cache.py), allocated here per chunk."""
    fnty = ir.FunctionType(VOID, [PTR, I32, I32, I32, I64, I64])
    fn = ir.Function(llmod, fnty, name=name)
    args_ptr, gx, gy, gz, start, end = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    params = []
    inputs = kernel.function_type.inputs
    for i, t in enumerate(inputs):
        slot = b.load(b.gep(args_ptr, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
        st = storage_type(t)
        v = b.load(slot, typ=st)
        params.append(b.icmp_unsigned("!=", v, ir.Constant(I8, 0)) if llvm_type(t) == I1 else v)
    state = None
    if asserts:  # the hidden last argument: this launch's assert state
        slot = b.load(b.gep(args_ptr, [ir.Constant(I64, len(inputs))], source_etype=PTR), typ=PTR)
        state = b.load(slot, typ=PTR, name="assert.state")
    cache = None
    if cache_plan is not None:
        # aligned to a cache line, as the stack buffers it stands in for (their loads and stores assume 64 bytes)
        alloc = ir.Function(llmod, ir.FunctionType(PTR, [I64, I64]), name="aligned_alloc")
        total = ir.Constant(I64, cache_plan.total)
        cache = b.call(alloc, [ir.Constant(I64, CACHE_LINE), total], name="operand.cache")
        with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(cache, I64), ir.Constant(I64, 0))):
            operand_cache.clear_markers(b, cache, cache_plan)
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
    hidden = ([state] if state is not None else []) + ([cache] if cache is not None else [])
    b.call(program, [*params, px, py, pz, gx, gy, gz, *hidden])
    nxt = b.add(lin, ir.Constant(I64, 1))
    lin.add_incoming(nxt, b.block)
    more = b.icmp_signed("<", nxt, end)
    if state is not None:
        flag = b.load_atomic(state, "monotonic", 4, typ=I32)
        more = b.and_(more, b.icmp_unsigned("==", flag, ir.Constant(I32, 0)))
    b.cbranch(more, loop, done)
    b.position_at_end(done)
    if streams:
        b.fence("seq_cst")
    if cache is not None:
        free = ir.Function(llmod, ir.FunctionType(VOID, [PTR]), name="free")
        b.call(free, [cache])
    b.ret_void()
