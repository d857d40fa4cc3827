"""SDK IR module → one OpenCL C kernel: the parameter list, the prologue (work-item and program ids), the body
rendered by the rule table, the helpers it used and the scratch area it needs: in local memory, or (`scratch_space`
"global", for a kernel whose scratch exceeds the device's local memory) this program's region of a global buffer the
launcher passes as a hidden parameter."""

from __future__ import annotations

from dataclasses import dataclass, field

from triton_backend_sdk.analysis.program_waits import programs_may_wait_for_each_other
from triton_backend_sdk.analysis.streaming_stores import launch_streaming_stores, streaming_stores
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import BlockArgument, Module, OpResult, Value
from triton_backend_sdk.ir.types import FloatType, IntType, PointerType
from triton_backend_sdk.lowering import RuleTable

from . import ctypes as CT
from .clock import SCALE
from .context import ALIGN, SCRATCH_GLOBAL, SCRATCH_LOCAL, RenderContext, scratch_member
from .control import render_body
from .debug import ERR
from .language import CStyleLanguage

#: bytes between the global scratch regions of consecutive programs are a multiple of this (a cache line apart)
GLOBAL_SCRATCH_ALIGN = 128
#: the hidden parameter of a kernel whose scratch is in global memory: the launcher's buffer of all programs' regions
GLOBAL_SCRATCH = "tb_gscratch"

#: the hidden parameters (one per axis) of a kernel whose launch may be split into pieces: the whole grid's size
GRID = "tb_grid"

#: numpy dtype names of scalar kernel parameters (f16/bf16 travel as float, i1 as a byte)
_SCALAR_NP = {
    "bool": "int8",
    "char": "int8",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
}


@dataclass
class RenderedKernel:
    name: str
    #: the device entry point's name (`CStyleLanguage.entry_prefix` + name)
    entry: str
    source: str
    local_size: int
    #: bytes of scratch area per program (local memory, or global memory when `scratch_space` is "global")
    scratch_bytes: int
    #: one entry per kernel parameter: ["ptr"] (a buffer and a byte offset) or ["scalar", numpy dtype, triton dtype]
    params: list[list[str]] = field(default_factory=list)
    #: indices of pointer parameters the kernel may write through
    written: list[int] = field(default_factory=list)
    #: [message, source location] per tt.assert; when not empty the kernel takes a last, hidden parameter: the
    #: error buffer of `asserts.ERR_INTS` ints the launcher passes and checks (render/debug.py)
    asserts: list[list[str]] = field(default_factory=list)
    #: whether the kernel prints (tt.print): the launcher flushes C stdio after it
    prints: bool = False
    #: whether the kernel reads a cycle counter: it takes the counter's scale as its hidden last parameter (after
    #: the error buffer), which the launcher measures once per process (render/clock.py)
    clock_scale: bool = False
    #: where the scratch area is: "local", or "global" (the kernel then takes GLOBAL_SCRATCH after its own
    #: parameters: a buffer of `global_scratch_stride` bytes per program, program i's region at i × stride)
    scratch_space: str = SCRATCH_LOCAL
    global_scratch_stride: int = 0
    #: whether the launcher may run the grid in pieces (`launch_chunks.py`): the kernel then takes the grid's size
    #: as its last three int parameters (GRID) and adds each piece's global offset to its group ids
    chunked: bool = False
    #: whether a loop's dot stages its operands in two copies (render/dot_blocked.py): rendering again with
    #: double_buffer=False needs less scratch
    double_buffered: bool = False


def _param_dtype(t) -> str:
    e = t.element
    if isinstance(e, FloatType):
        return CT.DTYPE_NAMES.get(e.kind, str(e))
    if isinstance(e, IntType):
        return f"i{e.width}"
    return str(e)


def written_params(kernel: O.Func) -> list[int]:
    """Pointer parameters a store or atomic may write through; where provenance is unclear, every pointer."""
    params = {a: i for i, a in enumerate(kernel.args) if isinstance(a.type, PointerType)}
    out: set[int] = set()

    def trace(v: Value, seen: set[int]) -> bool:
        if id(v) in seen:
            return True
        seen.add(id(v))
        if isinstance(v, BlockArgument):
            if v in params:
                out.add(params[v])
                return True
            return False
        assert isinstance(v, OpResult)
        if isinstance(v.op, (O.For, O.If, O.While, O.Call, O.IntToPtr)):
            return False  # a carried, branched, returned or integer-made pointer: provenance unknown
        return all(trace(x, seen) for x in v.op.operands if isinstance(x.type.element, PointerType))

    for op in kernel.walk():
        if isinstance(op, (O.Store, O.AtomicRMW, O.AtomicCAS)) and not trace(op.ptr, set()):
            return sorted(params.values())
        if isinstance(op, O.Call):
            return sorted(params.values())
    return sorted(out)


def render_module(
    module: Module,
    kernel_name: str,
    rules: RuleTable,
    lang: CStyleLanguage,
    local_size: int,
    features: frozenset[str],
    device: str,
    fp_fusion: bool = True,
    vector_bits: int = 128,
    scratch_space: str = SCRATCH_LOCAL,
    double_buffer: bool = False,
) -> RenderedKernel:
    funcs = {op.sym_name: op for op in module.ops if isinstance(op, O.Func)}
    if kernel_name not in funcs:
        raise UnsupportedError(rules.backend, f"no function @{kernel_name} in the module")
    kernel = funcs[kernel_name]
    ctx = RenderContext(rules, lang, local_size, features, device, fp_fusion, vector_bits, scratch_space, double_buffer)
    ctx.functions = funcs
    if ctx.L == 1 and lang.streaming_store(features) is not None:
        others = [f for f in funcs.values() if f is not kernel]
        ctx.streaming_stores = streaming_stores(kernel, others)
        ctx.launch_streaming_stores = launch_streaming_stores(kernel, others)
    params: list[str] = []
    prologue: list[str] = []
    kinds: list[list[str]] = []
    g = lang.global_qual
    for i, arg in enumerate(kernel.args):
        name = ctx.name_for(arg, "a")
        t = arg.type
        if isinstance(t, PointerType):
            try:
                mem = CT.mem_ctype(t.pointee)
            except CT.TypeError_ as e:
                raise ctx.unsupported(f"kernel argument {i} of type {t} ({e})") from None
            if CT.is_f64(t.pointee):
                ctx.require_fp64(None)
            params += [f"{g}{mem} *{name}_base", f"ulong {name}_off"]
            prologue.append(f"{g}{mem} *{name} = ({g}{mem} *)(({g}char *){name}_base + {name}_off);")
            kinds.append(["ptr"])
        elif t.is_tensor:
            raise ctx.unsupported(f"tensor kernel argument {i}")
        else:
            ct = ctx.ctype(arg)
            if ct == "bool":
                params.append(f"char {name}_raw")
                prologue.append(f"bool {name} = {name}_raw != 0;")
            else:
                params.append(f"{ct} {name}")
            kinds.append(["scalar", _SCALAR_NP.get(ct, ct), _param_dtype(t)])
        ctx.values[arg] = name
    ctx.call_stack.append(kernel_name)
    multi = len(kernel.regions[0].blocks) > 1
    render_body(ctx, kernel.regions[0], lambda ret: ctx.emit("return;") if multi else None)
    body = ctx.lines
    stride = 0
    if ctx.scratch_max and scratch_space == SCRATCH_GLOBAL:
        stride = -(-ctx.scratch_max // GLOBAL_SCRATCH_ALIGN) * GLOBAL_SCRATCH_ALIGN
        params.append(f"{g}uchar *{GLOBAL_SCRATCH}")
    if ctx.asserts:
        params.append(f"volatile {g}int *{ERR}")
    if ctx.clock_scale:
        params.append(f"ulong {SCALE}")
    chunked = bool(lang.chunk_group_id) and not programs_may_wait_for_each_other(module)
    if chunked:
        params += [f"int {GRID}{axis}" for axis in range(3)]
    # one work-item: its id is 0, said as a constant so the device compiler sees `r * 1 + lid` as `r` (PoCL left
    # the in-place pointer updates of tutorial 03's loop scalar, unsure that the read and written slots coincide)
    head = ["const uint lid = " + ("0u" if local_size == 1 else lang.local_id) + ";"]
    for axis in range(3):
        if chunked:
            per_group = f" / {local_size}u" if axis == 0 and local_size > 1 else ""
            pid, npid = lang.chunk_group_id.format(axis=axis, per_group=per_group), f"{GRID}{axis}"
        else:
            pid, npid = lang.group_id.format(axis=axis), lang.num_groups.format(axis=axis)
        head.append(f"const int tb_pid{axis} = {pid}, tb_npid{axis} = {npid};")
    q = ctx.scratch_qual
    if stride:
        pid = "(((ulong)tb_pid2 * (ulong)tb_npid1 + (ulong)tb_pid1) * (ulong)tb_npid0 + (ulong)tb_pid0)"
        head.append(f"{q}union tb_scratch *tb_smem = ({q}union tb_scratch *)({GLOBAL_SCRATCH} + {pid} * {stride}UL);")
    elif ctx.scratch_max:
        head.insert(0, f"{q}union tb_scratch *tb_smem = &tb_smem_area;")
        head.insert(0, f"{q}union tb_scratch tb_smem_area {lang.aligned.format(n=ALIGN)};")
    out: list[str] = ["/* generated by triton-backend-sdk (opencl) */"]
    if lang.prelude:
        out.append(lang.prelude)
    if ctx.uses_fp64:
        out.append(lang.fp64_pragma)
    if ctx.uses_int64_atomics:
        out.append(lang.int64_atomics_pragma)
    if not fp_fusion:
        out.append(lang.fp_contract_off)
    for h in ctx.helpers:
        out.append(ctx.helper_text[h])
    if ctx.scratch_max:
        out.append(_scratch_union(ctx))
    out.append(lang.fixed_group_size.format(size=local_size))
    out += lang.kernel_tuning(features)
    entry = lang.entry_prefix + kernel_name
    out.append(f"{lang.kernel_prefix}void {entry}(" + ", ".join(params) + ") {")
    out += ["  " + line for line in head + prologue]
    out += body
    out.append("}")
    return RenderedKernel(
        kernel_name,
        entry,
        "\n".join(out) + "\n",
        local_size,
        ctx.scratch_max,
        kinds,
        written_params(kernel),
        ctx.asserts,
        ctx.prints,
        ctx.clock_scale,
        scratch_space=scratch_space if ctx.scratch_max else SCRATCH_LOCAL,
        global_scratch_stride=stride,
        chunked=chunked,
        double_buffered=ctx.double_buffered,
    )


def _scratch_union(ctx: RenderContext) -> str:
    """The scratch area's type: an array member per element type kept there, each spanning the whole area (see
    `ScratchArray` for why accesses go through members)."""
    members = " ".join(
        f"{ct} {scratch_member(ct)}[{-(-ctx.scratch_max // CT.size_of(ct))}];" for ct in sorted(ctx.scratch_ctypes)
    )
    return f"union tb_scratch {{ {members} }};"
