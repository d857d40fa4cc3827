"""KernelSpec -> the Python source of a `@triton.jit` kernel (one statement per operation, one store per case).

The file also holds the spec (`SPEC`), so it is a complete repro: `triton-sdk fuzz --replay FILE` rebuilds the
inputs and runs it on the backends and the interpreter.
"""

from __future__ import annotations

import pprint

from . import dtypes as D
from .spec import Expr, KernelSpec, Node, used_inputs


def out_dtype(e: Expr) -> str:
    """The stored dtype of a case (int1 results are stored as int8)."""
    return "int8" if e.node.dtype == D.BOOL else e.node.dtype


def out_shape(spec: KernelSpec, e: Expr) -> tuple[int, ...]:
    if e.kind in ("elementwise", "scan"):
        return (spec.M, spec.N) if spec.ndim == 2 else (spec.M,)
    if e.kind == "reduce":
        if spec.ndim == 1:
            return (spec.grid,)
        return (spec.M,) if e.attr["axis"] == 1 else (spec.grid, spec.N)
    return (spec.M, spec.BM)  # dot


def _lit(v: object) -> str:
    return repr(v)


class _Emitter:
    def __init__(self, spec: KernelSpec, prefix: str) -> None:
        self.spec = spec
        self.prefix = prefix
        self.lines: list[str] = []
        self.count = 0

    def tmp(self, text: str) -> str:
        name = f"{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {text}")
        return name

    def index(self, n: Node) -> str:
        two = self.spec.ndim == 2
        base = ("rm[:, None]" if n.attr["axis"] == 0 else "rn[None, :]") if two else "rm"
        return f"({base} * {n.attr['mul']} + {n.attr['add']})"

    def masked(self, a: str, nan_free: bool) -> str:
        cond = f"mask & ({a} == {a})" if nan_free else "mask"
        return f"tl.where({cond}, {a}, 0)"

    def emit(self, n: Node) -> str:
        op, at = n.op, n.attr
        if op == "load":
            return at["name"]
        if op == "lit":
            return _lit(at["value"])
        if op == "index":
            return self.tmp(self.index(n))
        if op == "full":
            shape = "(BM, BN)" if self.spec.ndim == 2 else "(BM,)"
            return self.tmp(f"tl.full({shape}, {_lit(at['value'])}, tl.{n.dtype})")
        a = [self.emit(x) for x in n.args]
        nan = ", propagate_nan=tl.PropagateNan.ALL" if at.get("nan") == "all" else ""
        if op in ("bin", "cmp"):
            text = f"{a[0]} {at['sym']} {a[1]}"
        elif op == "un":
            text = f"tl.abs({a[0]})" if at["sym"] == "abs" else f"{at['sym']}{a[0]}"
        elif op == "math":
            text = f"tl.{at['fn']}({a[0]})"
        elif op == "div":
            text = f"tl.div_rn({a[0]}, {a[1]})" if at["sym"] == "div_rn" else f"{a[0]} {at['sym']} {a[1]}"
        elif op == "where":
            text = f"tl.where({a[0]}, {a[1]}, {a[2]})"
        elif op == "minmax":
            text = f"tl.{at['fn']}({a[0]}, {a[1]}{nan})"
        elif op == "fma":
            text = f"tl.fma({a[0]}, {a[1]}, {a[2]})"
        elif op == "clamp":
            text = f"tl.clamp({a[0]}, {_lit(at['lo'])}, {_lit(at['hi'])}{nan})"
        elif op == "umulhi":
            text = f"tl.umulhi({a[0]}, {a[1]})"
        elif op == "cast":
            rtz = ', fp_downcast_rounding="rtz"' if at.get("rtz") else ""
            text = f"{a[0]}.to(tl.{n.dtype}{rtz})"
        elif op == "bitcast":
            text = f"{a[0]}.to(tl.{n.dtype}, bitcast=True)"
        elif op == "reduce":
            arg = at["kind"] in ("argmax", "argmin") and D.is_float(n.args[0].dtype)
            src = self.masked(a[0], nan_free=arg)
            text = f"tl.{at['kind']}({src}, axis={at['axis']}, keep_dims={at['keep']}).to(tl.{n.dtype})"
        elif op == "scan":
            text = f"tl.cumsum({self.masked(a[0], False)}, axis={at['axis']}, reverse={at['reverse']}).to(tl.{n.dtype})"
        elif op == "dot":
            prec = ', input_precision="ieee"' if n.args[0].dtype == "float32" else ""
            text = f"tl.dot({self.masked(a[0], False)}, tl.trans({self.masked(a[1], False)}){prec})"
        else:
            raise ValueError(f"unknown op {op!r}")
        return self.tmp(text)


def _load(spec: KernelSpec, name: str) -> str:
    inp = spec.input(name)
    if spec.ndim == 2:
        offs = f"rm[:, None] * s_{name}_0 + rn[None, :] * s_{name}_1"
        holes = "(((rm[:, None] + rn[None, :]) % 3) != 1)"
    else:
        offs = f"rm * s_{name}_0"
        holes = "((rm % 3) != 1)"
    mask = f"mask & {holes}" if inp.mask == "holes" else "mask"
    other = "" if inp.other is None else f", other={_lit(inp.other)}"
    return f"    {name} = tl.load(p_{name} + {offs}, mask={mask}{other})"


def _store(spec: KernelSpec, k: int, e: Expr, value: str) -> list[str]:
    two = spec.ndim == 2
    if e.node.dtype == D.BOOL:
        value = f"{value}.to(tl.int8)"
    if e.kind in ("elementwise", "scan"):
        offs = "rm[:, None] * N + rn[None, :]" if two else "rm"
        return [f"    tl.store(out{k} + {offs}, {value}, mask=mask)"]
    if e.kind == "reduce":
        if not two:
            return [f"    tl.store(out{k} + pid, {value})"]
        if e.attr["axis"] == 1:
            return [f"    tl.store(out{k} + rm, {value}, mask=rm < M)"]
        return [f"    tl.store(out{k} + pid * N + rn, {value}, mask=rn < N)"]
    cols = "(pid * BM + tl.arange(0, BM))[None, :]"
    offs = "rm[:, None] * BM + tl.arange(0, BM)[None, :]"
    return [f"    tl.store(out{k} + {offs}, {value}, mask=(rm[:, None] < M) & ({cols} < M))"]


def params(spec: KernelSpec) -> list[str]:
    """The kernel's parameters in order: input pointers, outputs, sizes, strides, the two constexprs."""
    names = [i.name for i in spec.inputs if i.name in used_inputs(spec.exprs)]
    out = [f"p_{n}" for n in names] + [f"out{k}" for k in range(len(spec.exprs))] + ["M", "N"]
    for n in names:
        out += [f"s_{n}_0", f"s_{n}_1"] if spec.ndim == 2 else [f"s_{n}_0"]
    return out + ["BM: tl.constexpr", "BN: tl.constexpr"]


def render(spec: KernelSpec) -> str:
    """The kernel file's text."""
    lines = [
        f'"""Generated by triton_backend_sdk.fuzz: {len(spec.exprs)} cases. Run: triton-sdk fuzz --replay <this file>"""',
        "",
        "import triton",
        "import triton.language as tl",
        "",
        "",
        "@triton.jit",
        f"def {spec.name}({', '.join(params(spec))}):",
        "    pid = tl.program_id(0)",
        "    rm = pid * BM + tl.arange(0, BM)",
    ]
    if spec.ndim == 2:
        lines += ["    rn = tl.arange(0, BN)", "    mask = (rm[:, None] < M) & (rn[None, :] < N)"]
    else:
        lines += ["    mask = rm < M"]
    for name in sorted(used_inputs(spec.exprs), key=lambda s: int(s[1:])):
        lines.append(_load(spec, name))
    for k, e in enumerate(spec.exprs):
        em = _Emitter(spec, f"e{k}_")
        value = em.emit(e.node)
        lines += [f"    # case {k}: {e.kind}"] + em.lines + _store(spec, k, e, value)
    lines += ["", "", f"SPEC = {pprint.pformat(spec.to_json(), width=116, sort_dicts=False)}", ""]
    return "\n".join(lines)
