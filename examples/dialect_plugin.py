"""A dialect plugin, worked through: ops of a vendor's own dialect (`acme.*`) with a multi-result op and a reduction,
and an upstream Triton extension library's dialect (`plugin.magic`, the MLIR dialect plugin shipped in Triton's
wheel) given an SDK IR form and lowerings.

    python examples/dialect_plugin.py --backend cpu_ref      # or opencl, or both (each in its own process)

Each part prints what it checked against torch. The upstream library is loaded into Triton's process-wide symbol
scope, where its LLVM replaces PoCL's own: on PoCL that part is refused by name (run it on cpu_ref, or on an OpenCL
driver without its own LLVM); the `acme` dialect needs no library and runs everywhere.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import torch
import triton
import triton.language as tl
import triton_backend_sdk as tbs
from triton_backend_sdk import plugins
from triton_backend_sdk.custom_ops import custom_op, dialect_op
from triton_backend_sdk.errors import SDKError

# ---- the acme dialect: ops declared in Python, lowered per backend -------------------------------------------------

#: (quotient, remainder) rounding toward zero, as C and Triton's `//` on int32 do not (Python floors): one op with
#: two results
divmod_ = custom_op("acme.divmod", {("int32", "int32"): ("int32", "int32")}, doc="(a / b, a % b), C's rounding")
#: max(|a|, |b|): the combine of the `absmax` reduction below
absmax_combine = custom_op("acme.absmax2", {("fp32", "fp32"): "fp32"}, doc="max(|a|, |b|)")


@divmod_.lowering("cpu_ref")
def _divmod_cpu_ref(ctx, op) -> None:
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift_each

    lift_each(ctx, op, lambda a, b: (ctx.b.sdiv(a, b), ctx.b.srem(a, b)))


@divmod_.lowering("opencl")
def _divmod_opencl(ctx, op) -> None:
    from triton_backend_sdk.backends.opencl.render.elementwise import lift_each

    lift_each(ctx, op, lambda a, b: (f"({a} / {b})", f"({a} % {b})"))


@absmax_combine.lowering("cpu_ref")
def _absmax_cpu_ref(ctx, op) -> None:
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import call_intrinsic, lift

    def absmax(a, b):
        return call_intrinsic(
            ctx, "llvm.maxnum", [call_intrinsic(ctx, "llvm.fabs", [a]), call_intrinsic(ctx, "llvm.fabs", [b])]
        )

    lift(ctx, op, absmax)


@absmax_combine.lowering("opencl")
def _absmax_opencl(ctx, op) -> None:
    from triton_backend_sdk.backends.opencl.render.elementwise import lift

    lift(ctx, op, lambda a, b: f"fmax(fabs({a}), fabs({b}))")


@triton.jit
def _absmax_pair(a, b):
    return absmax_combine(a, b)


@triton.jit
def absmax(x, axis: tl.constexpr):
    """The plugin's reduction: the largest magnitude along `axis`, through each backend's own reduction."""
    return tl.reduce(x, axis, _absmax_pair)


@triton.jit
def acme_kernel(a_ptr, b_ptr, q_ptr, r_ptr, x_ptr, m_ptr, n, cols, BLOCK: tl.constexpr, COLS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q, r = divmod_(tl.load(a_ptr + offs, mask=mask, other=0), tl.load(b_ptr + offs, mask=mask, other=1))
    tl.store(q_ptr + offs, q, mask=mask)
    tl.store(r_ptr + offs, r, mask=mask)
    c = tl.arange(0, COLS)
    x = tl.load(x_ptr + tl.program_id(0) * cols + c, mask=c < cols, other=0.0)
    tl.store(m_ptr + tl.program_id(0), absmax(x, 0))


def run_acme(backend: str) -> None:
    g = torch.Generator().manual_seed(3)
    programs, block, cols = 5, 64, 77
    n = programs * block - 13
    a = torch.randint(-(10**6), 10**6, (n,), generator=g, dtype=torch.int32)
    b = torch.randint(1, 1000, (n,), generator=g, dtype=torch.int32) * (torch.randint(0, 2, (n,), generator=g) * 2 - 1)
    x = torch.randn(programs, cols, generator=g)
    q, r, m = torch.empty_like(a), torch.empty_like(a), torch.empty(programs)
    acme_kernel[(programs,)](a, b.to(torch.int32), q, r, x, m, n, cols, BLOCK=block, COLS=128)
    want_q = torch.div(a, b, rounding_mode="trunc")
    assert torch.equal(q, want_q) and torch.equal(r, a - want_q * b), "acme.divmod"
    assert torch.equal(m, x.abs().amax(1)), "absmax reduction"
    print(f"{backend}: acme.divmod (two results) and the absmax reduction match torch on {n} and {programs}x{cols}")


# ---- an upstream Triton extension library's dialect ------------------------------------------------------------------

#: the MLIR dialect plugin Triton's wheel ships (upstream examples/plugins/DialectPlugins): dialect `plugin`, op
#: `plugin.magic` (i32 -> i32; on the CUDA path it adds the GPU thread id, which is 0 for a CPU program's one thread),
#: and a builder function `create_custom_op` that emits `arith.addf x, x`
UPSTREAM_LIBRARY = os.path.join(os.path.dirname(triton.__file__), "plugins", "libMLIRDialectPlugin.so")
magic = dialect_op(
    "plugin.magic", ("input",), ("res",), {("int32",): "int32"}, assembly_format="$input attr-dict : type($input)"
)


@magic.lowering("cpu_ref")
def _magic_cpu_ref(ctx, op) -> None:
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift

    lift(ctx, op, lambda a: a)  # input + thread id, and a program is one thread


@magic.lowering("opencl")
def _magic_opencl(ctx, op) -> None:
    from triton_backend_sdk.backends.opencl.render.elementwise import lift

    lift(ctx, op, lambda a: a)  # a scalar op: every work-item of the program computes it, as for thread 0


MAGIC_TTIR = """module {
  tt.func public @magic_kernel(%x: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    %m = plugin.magic %pid : i32
    %base = tt.addptr %x, %m : !tt.ptr<i32>, i32
    %v = tt.load %base : !tt.ptr<i32>
    %out = tt.addptr %y, %pid : !tt.ptr<i32>, i32
    tt.store %out, %v : !tt.ptr<i32>
    tt.return
  }
}
"""


@tl.core.builtin
def upstream_double(x, _semantic=None):
    """Upstream's builder extension: `create_custom_op` (x + x), callable once the library is loaded."""
    return tl.tensor(_semantic.builder.create_custom_op([x.handle]), x.type)


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, upstream_double(x), mask=offs < n)


def run_upstream(backend: str) -> None:
    plugins.activate(plugins.Plugin("upstream_dialect", "0.1.0", ops=(magic,), mlir_libraries=(UPSTREAM_LIBRARY,)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "magic.ttir")
        with open(path, "w") as f:
            f.write(MAGIC_TTIR)
        try:
            k = triton.compile(path, target=tbs.target(backend))
        except SDKError as e:
            print(f"{backend}: the upstream dialect is refused here: {str(e).splitlines()[0]}")
            return
    x, y = torch.arange(100, 108, dtype=torch.int32), torch.empty(8, dtype=torch.int32)
    k[(8, 1, 1)](x, y)
    assert torch.equal(y, x) and "plugin.magic" in k.asm["ttir"], (y, x)
    v = torch.randn(100, generator=torch.Generator().manual_seed(5))
    w = torch.empty_like(v)
    double_kernel[(1,)](v, w, 100, BLOCK=128)
    assert torch.equal(w, v + v), "create_custom_op"
    print(f"{backend}: plugin.magic (read from TTIR through the library's dialect) and create_custom_op match torch")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu_ref", choices=["cpu_ref", "opencl", "both"])
    args = p.parse_args()
    if args.backend == "both":  # a process each: the upstream library and PoCL do not share one
        return max(subprocess.call([sys.executable, __file__, "--backend", b]) for b in ("cpu_ref", "opencl"))
    tbs.use(args.backend)
    plugins.activate(plugins.Plugin("acme_dialect", "0.1.0", ops=(divmod_, absmax_combine)))
    run_acme(args.backend)
    run_upstream(args.backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
