"""Editing plugin-contributed code changes the next process's result (issue 14: stale binaries).

Fresh processes share one TRITON_CACHE_DIR, as a user's runs do. Each run compiles three kernels on cpu_ref, one
per kind of contributed code, whose behaviour lives outside the file that declares it: a custom op whose lowering
reads a constant from a helper module (imported inside the rule), an SDK IR pass whose mode comes from a module its
module imports, and a stage hook configured by a captured value and by an environment variable it declares through
`cache_key()`. Before, each edit reused the old binary (the key held only the declaring file's digest).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch, triton, triton.language as tl
    import triton_backend_sdk
    from triton.compiler import ASTSource
    from triton_backend_sdk.pipeline import inject
    import tsdk_ci_ops, tsdk_ci_pass

    @triton.jit
    def op_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tsdk_ci_ops.addk(tl.load(x_ptr + offs, mask=m)), mask=m)

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    def make_hook(mode):
        def hook(src, md):
            flip = mode == "sub" or os.environ.get("TSDK_CI_HOOK") == "sub"
            return src.replace("arith.addf", "arith.subf") if flip else src
        hook.cache_key = lambda: os.environ.get("TSDK_CI_HOOK", "")
        return hook

    target = triton_backend_sdk.target("cpu_ref")
    n = 37
    x, y = torch.rand(n) + 1, torch.rand(n)
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    results = {}
    out = torch.empty(n)
    k = triton.compile(ASTSource(op_kernel, {k: v for k, v in sig.items() if k != "y_ptr"}, {"BLOCK": 64}), target=target)
    k[(1, 1, 1)](x, out, n, 64)
    results["op"] = round(float((out - x).mean()), 4)
    inj = inject("after:ttgir", tsdk_ci_pass.ModePass(), backends="cpu_ref")
    k = triton.compile(ASTSource(add_kernel, sig, {"BLOCK": 64}), target=target)
    k[(1, 1, 1)](x, y, out, n, 64)
    results["pass"] = "sub" if torch.allclose(out, x - y) else "mul" if torch.allclose(out, x * y) else "add"
    from triton_backend_sdk.pipeline import remove_injection
    remove_injection(inj)
    inject("after:ttgir", make_hook(sys.argv[1]), backends="cpu_ref")
    k = triton.compile(ASTSource(add_kernel, sig, {"BLOCK": 32}), target=target)
    k[(1, 1, 1)](x, y, out, n, 32)
    results["hook"] = "sub" if torch.allclose(out[:32], x[:32] - y[:32]) else "add"
    print(json.dumps(results))
""")

OPS = textwrap.dedent("""
    from triton_backend_sdk.custom_ops import custom_op

    addk = custom_op("tsdkci.addk", {("fp32",): "fp32"}, doc="x + K, K from tsdk_ci_const")

    @addk.lowering("cpu_ref")
    def _addk(ctx, op):
        from llvmlite import ir
        from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift
        from tsdk_ci_const import K

        lift(ctx, op, lambda a: ctx.b.fadd(a, ir.Constant(a.type, K)))
""")

PASS = textwrap.dedent("""
    import tsdk_ci_mode
    from triton_backend_sdk.ir import ops as O
    from triton_backend_sdk.pipeline import ir_pass

    @ir_pass(name="tsdk-ci-mode")
    class ModePass:
        def run(self, module, ctx):
            new_cls = {"sub": O.SubF, "mul": O.MulF}.get(tsdk_ci_mode.MODE)
            for op in list(module.walk()):
                if new_cls is not None and isinstance(op, O.AddF):
                    new = new_cls(list(op.operands), [op.result.type], loc=op.loc)
                    op.parent.insert(op.parent.ops.index(op), new)
                    op.result.replace_all_uses_with(new.result)
                    op.erase()
""")


def _entries(cache: str) -> int:
    return sum(len(files) for _, _, files in os.walk(cache))


@pytest.mark.timeout(600)
def test_edits_to_contributed_code_recompile_in_the_next_process(tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "tsdk_ci_ops.py").write_text(OPS)
    (mods / "tsdk_ci_pass.py").write_text(PASS)
    (mods / "tsdk_ci_const.py").write_text("K = 1.0\n")
    (mods / "tsdk_ci_mode.py").write_text('MODE = "sub"\n')
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    cache = tmp_path / "cache"

    def run(hook_mode: str = "add", hook_env: str = "") -> dict:
        env = {**os.environ, "TRITON_CACHE_DIR": str(cache), "PYTHONPATH": str(mods), "TSDK_CI_HOOK": hook_env}
        env.pop("TRITON_SDK_DUMP_DIR", None)
        out = subprocess.run(
            [sys.executable, str(script), hook_mode], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"op": 1.0, "pass": "sub", "hook": "add"}
    entries = _entries(str(cache))
    assert run() == {"op": 1.0, "pass": "sub", "hook": "add"}
    assert _entries(str(cache)) == entries, "an unchanged run must find every kernel in the cache"
    (mods / "tsdk_ci_const.py").write_text("K = 2.5  # edited helper of the lowering\n")
    assert run() == {"op": 2.5, "pass": "sub", "hook": "add"}
    (mods / "tsdk_ci_mode.py").write_text('MODE = "mul"  # edited module the pass imports\n')
    assert run() == {"op": 2.5, "pass": "mul", "hook": "add"}
    assert run(hook_mode="sub")["hook"] == "sub", "a captured value is part of the key"
    assert run(hook_env="sub")["hook"] == "sub", "a hook's cache_key() is part of the key"
