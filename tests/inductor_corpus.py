"""torch.compile workloads for Inductor's CPU-Triton route (`torch._inductor.config.cpu_backend = "triton"`).

Each workload is built from torch.nn / torch.nn.functional with random weights (no downloads), compiled by Inductor
(its Triton kernels compiled and run by the SDK's "cpu" backend, a face of cpu_ref or opencl) and compared with
eager. How it is compared: every floating output (and gradient) is checked against an fp64 eager reference of the
same computation (the module and inputs cast to float64), and may be off it by at most 4x what eager in the
workload's dtype is off it, plus a floor (`FLOOR`, relative to the output's magnitude). So an fp16/bf16 workload is
held to what eager itself achieves in that dtype, not to bit equality with a low-precision eager that legitimately
rounds differently; integer outputs must equal eager's exactly.

`CI` names the fast slice the default test run takes; `TBS_INDUCTOR_CORPUS=1` runs all of them (test_inductor_route.py).
`python tests/inductor_corpus.py --backend cpu_ref [--backend opencl] [--out FILE] [-k SUBSTR]` runs the corpus
one workload per subprocess (a crash or a hang is one workload's result, not the run's) and writes the results table.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

#: max-abs error floor per dtype, times max(1, max |reference|)
FLOOR = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
#: how many times eager's own error (against the fp64 reference) the compiled result may have
MULTIPLIER = 4.0
#: Inductor settings every run uses: the route under test, compiled in-process (compile workers are tested by
#: test_inductor_route.py's subprocess test), no FX graph cache (so that each run generates and compiles its kernels)
BASE_CONFIG = {"cpu_backend": "triton", "compile_threads": 1, "fx_graph_cache": False}


@dataclass(frozen=True)
class Case:
    """What a workload builds: `fn` (an nn.Module or a function of tensors) and one argument tuple per call (more
    than one for dynamic shapes: each is compiled-and-compared in turn)."""

    fn: Callable[..., Any]
    calls: Sequence[tuple[Any, ...]]


@dataclass(frozen=True)
class Workload:
    name: str
    build: Callable[[torch.Generator], Case]
    dtype: torch.dtype = torch.float32
    dynamic: bool = False
    #: also compare the gradients of a fixed random projection of the outputs (inputs and parameters)
    backward: bool = False
    #: run as a training step (`train`: the case's fn is a module, calls are (x, target); 3 SGD steps, params compared)
    train: bool = False
    #: Inductor config patched for this workload (beyond BASE_CONFIG)
    config: dict[str, Any] = field(default_factory=dict)
    #: seconds, for the subprocess runner and pytest-timeout
    timeout: int = 600
    #: what else the workload exercises, for the report (integer data, int64 indices)
    also: tuple[str, ...] = ()

    @property
    def tags(self) -> str:
        bits = [str(self.dtype).removeprefix("torch."), *self.also]
        if self.dynamic:
            bits.append("dynamic")
        if self.backward:
            bits.append("fwd+bwd")
        if self.train:
            bits.append("train")
        return ",".join(bits)


# ---- building blocks --------------------------------------------------------------------------------------------


def randn(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=g) * scale


def randomize(m: nn.Module, g: torch.Generator) -> nn.Module:
    """Random weights (seeded): matrices ~ N(0, 1/fan_in), 1-D weights ~ 1 + N(0, 0.1²), biases ~ N(0, 0.1²);
    batch-norm running statistics random too."""
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() >= 2:
                p.copy_(randn(g, *p.shape, scale=1 / math.sqrt(p[0].numel())))
            elif name.endswith("weight"):
                p.copy_(1 + randn(g, *p.shape, scale=0.1))
            else:
                p.copy_(randn(g, *p.shape, scale=0.1))
        for name, b in m.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(randn(g, *b.shape, scale=0.1))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(*b.shape, generator=g))
    return m.eval()


class Fn(nn.Module):
    """A function with weights as a module (so that dtype casts reach the weights)."""

    def __init__(self, f: Callable[..., Any], **weights: torch.Tensor) -> None:
        super().__init__()
        self.f = f
        for k, v in weights.items():
            self.register_parameter(k, nn.Parameter(v))

    def forward(self, *args: Any) -> Any:
        return self.f(self, *args)


class With(nn.Module):
    """`f(module, *args)` as a module holding `module` (so that dtype casts reach its weights)."""

    def __init__(self, module: nn.Module, f: Callable[..., Any]) -> None:
        super().__init__()
        self.inner = module
        self.f = f

    def forward(self, *args: Any) -> Any:
        return self.f(self.inner, *args)


def one(fn: Callable[..., Any], *args: Any) -> Case:
    return Case(fn, [args])


# ---- workloads ----------------------------------------------------------------------------------------------------


def pointwise_chain(g: torch.Generator) -> Case:
    def f(x, y):
        a = torch.sigmoid(x) * torch.tanh(y) + F.gelu(x - y)
        b = torch.where(a > 0.1, torch.exp(-a.abs()), F.silu(a)) * 1.5
        return torch.clamp(b + torch.sqrt(x * x + 1.0) - torch.log1p(y.abs()), -3.0, 3.0)

    return one(f, randn(g, 64, 257), randn(g, 64, 257))


def pointwise_dynamic(g: torch.Generator) -> Case:
    def f(x, y):
        return F.gelu(x) * torch.sigmoid(y) + (x - y).abs().sqrt()

    return Case(f, [(randn(g, 37, 129), randn(g, 37, 129)), (randn(g, 53, 70), randn(g, 53, 70))])


def broadcast_bias(g: torch.Generator) -> Case:
    def f(x, b, s):
        return F.relu(x * s[:, None] + b) - 0.5 * x.mean(dim=1, keepdim=True)

    return one(f, randn(g, 96, 200), randn(g, 200), randn(g, 96))


def transcendental(g: torch.Generator) -> Case:
    def f(x):
        return (
            torch.erf(x)
            + torch.expm1(x * 0.5)
            + torch.atan(x)
            + torch.sinh(x * 0.3)
            + torch.cos(x) * torch.sin(x)
            + torch.rsqrt(x.abs() + 0.5)
            + torch.pow(x.abs() + 0.1, 1.7)
            + torch.lgamma(x.abs() + 0.5)
        )

    return one(f, randn(g, 128, 130))


def special_extreme(g: torch.Generator) -> Case:
    """torch.special.erfcx / log_ndtr over the whole range, where naive formulas overflow (x up to 30)."""

    def f(x):
        return torch.special.erfcx(x), torch.special.log_ndtr(-x)

    return one(f, torch.linspace(-3.0, 30.0, 4099))


def rounding(g: torch.Generator) -> Case:
    def f(x):
        return torch.round(x), torch.floor(x), torch.ceil(x), torch.trunc(x), torch.frac(x), torch.round(x, decimals=2)

    return one(f, randn(g, 64, 129, scale=10))


def nan_inf(g: torch.Generator) -> Case:
    def f(x):
        y = torch.nan_to_num(torch.log(x), nan=0.0, posinf=1e4, neginf=-1e4)
        return y, torch.isfinite(1.0 / x), torch.maximum(x, torch.tensor(float("nan")) * (x > 2))

    return one(f, randn(g, 4, 257) * 3)


def fp64_pointwise(g: torch.Generator) -> Case:
    def f(x, y):
        return torch.exp(torch.sin(x) * y) / (1 + y * y) + torch.log(x.abs() + 1e-3)

    return one(f, randn(g, 64, 65), randn(g, 64, 65))


def int64_arith(g: torch.Generator) -> Case:
    def f(a, b):
        return a // b, a % b, (a * 7 + 3) ^ (b << 2), torch.where(a > b, a - b, b * 2), (a >> 3) & 0xFF

    a = torch.randint(-(2**40), 2**40, (50, 67), generator=g)
    b = torch.randint(1, 1000, (50, 67), generator=g) * torch.where(torch.rand(50, 67, generator=g) > 0.5, 1, -1)
    return one(f, a, b)


def int32_arith(g: torch.Generator) -> Case:
    def f(a, b):
        return a // b, torch.remainder(a, b), a * b + 3, torch.bitwise_and(a, b) | 1, torch.clamp(a >> 2, -500, 500)

    a = torch.randint(-100000, 100000, (40, 129), generator=g, dtype=torch.int32)
    b = torch.randint(1, 97, (40, 129), generator=g, dtype=torch.int32)
    return one(f, a, -b)


def gather_int64(g: torch.Generator) -> Case:
    def f(x, idx, rows):
        return torch.gather(x, 1, idx) * 2, x.index_select(0, rows).sum(-1), x[rows[:5]][:, idx[0, :7]]

    return one(
        f, randn(g, 300, 64), torch.randint(0, 64, (300, 33), generator=g), torch.randint(0, 300, (77,), generator=g)
    )


def scatter_add(g: torch.Generator) -> Case:
    def f(src, idx, base):
        return base.scatter_add(0, idx, src), torch.zeros(50, dtype=src.dtype).index_add(0, idx[:, 0], src[:, 0])

    idx = torch.randint(0, 50, (400, 8), generator=g)
    return one(f, randn(g, 400, 8), idx, randn(g, 50, 8))


def layer_norm(g: torch.Generator) -> Case:
    return one(randomize(nn.LayerNorm(384), g), randn(g, 16, 24, 384))


def layer_norm_dynamic(g: torch.Generator) -> Case:
    m = randomize(nn.LayerNorm(96), g)
    return Case(m, [(randn(g, 37, 96),), (randn(g, 5, 19, 96),)])


def rms_norm(g: torch.Generator) -> Case:
    return one(randomize(nn.RMSNorm(512, eps=1e-6), g), randn(g, 8, 33, 512))


def batch_norm_eval(g: torch.Generator) -> Case:
    return one(randomize(nn.BatchNorm2d(24), g), randn(g, 4, 24, 17, 19))


def group_norm(g: torch.Generator) -> Case:
    return one(randomize(nn.GroupNorm(4, 32), g), randn(g, 3, 32, 9, 11))


def softmax(g: torch.Generator) -> Case:
    return one(lambda x: F.softmax(x * 3, dim=-1), randn(g, 64, 1000))


def softmax_dim0(g: torch.Generator) -> Case:
    return one(lambda x: F.softmax(x, dim=0), randn(g, 129, 200))


def softmax_dynamic(g: torch.Generator) -> Case:
    return Case(lambda x: F.softmax(x, dim=-1), [(randn(g, 20, 300),), (randn(g, 7, 1030),)])


def log_softmax(g: torch.Generator) -> Case:
    return one(lambda x: F.log_softmax(x * 4, dim=-1), randn(g, 48, 517))


def masked_softmax(g: torch.Generator) -> Case:
    def f(x, mask):
        return F.softmax(x.masked_fill(~mask, float("-inf")), dim=-1)

    mask = torch.rand(32, 100, generator=g) > 0.3
    mask[:, 0] = True
    return one(f, randn(g, 32, 100), mask)


def cross_entropy(g: torch.Generator) -> Case:
    return one(lambda x, t: F.cross_entropy(x, t), randn(g, 64, 1000), torch.randint(0, 1000, (64,), generator=g))


def cross_entropy_smooth(g: torch.Generator) -> Case:
    t = torch.randint(0, 257, (96,), generator=g)
    t[::7] = -100

    def f(x, t):
        return F.cross_entropy(x, t, label_smoothing=0.1, ignore_index=-100)

    return one(f, randn(g, 96, 257, scale=2), t)


def cross_entropy_dynamic(g: torch.Generator) -> Case:
    calls = [(randn(g, n, c), torch.randint(0, c, (n,), generator=g)) for n, c in ((17, 311), (40, 129))]
    return Case(lambda x, t: F.cross_entropy(x, t, reduction="sum"), calls)


def nll_loss(g: torch.Generator) -> Case:
    return one(
        lambda x, t: F.nll_loss(F.log_softmax(x, -1), t), randn(g, 50, 64), torch.randint(0, 64, (50,), generator=g)
    )


def embedding(g: torch.Generator) -> Case:
    m = With(randomize(nn.Embedding(5000, 64), g), lambda m, idx: m(idx) * 2 + 1)
    return one(m, torch.randint(0, 5000, (8, 37), generator=g))


def embedding_module(g: torch.Generator) -> Case:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(1000, 48)
            self.pos = nn.Embedding(64, 48)

        def forward(self, idx):
            return F.layer_norm(self.emb(idx) + self.pos(torch.arange(idx.shape[1])), (48,))

    return one(randomize(M(), g), torch.randint(0, 1000, (4, 64), generator=g))


def reductions(g: torch.Generator) -> Case:
    def f(x):
        return (
            x.sum(-1),
            x.mean(0),
            x.var(-1),
            x.amax(1),
            x.argmax(-1),
            x.argmin(0),
            torch.linalg.vector_norm(x, dim=-1),
        )

    return one(f, randn(g, 97, 301))


def reductions_dynamic(g: torch.Generator) -> Case:
    def f(x):
        return x.sum(-1), x.amax(0), x.std(-1), x.argmax(-1)

    return Case(f, [(randn(g, 30, 77),), (randn(g, 51, 203),)])


def var_mean(g: torch.Generator) -> Case:
    return one(lambda x: torch.var_mean(x * 10 + 100, dim=(0, 2), correction=0), randn(g, 8, 64, 300))


def cumsum(g: torch.Generator) -> Case:
    return one(lambda x: (x.cumsum(-1), x.cumsum(0)), randn(g, 64, 300))


def cumsum_int64(g: torch.Generator) -> Case:
    return one(
        lambda x: (x.cumsum(-1), torch.cumprod(x % 3 + 1, -1)[:, :20]),
        torch.randint(-1000, 1000, (16, 513), generator=g),
    )


def logcumsumexp(g: torch.Generator) -> Case:
    return one(lambda x: torch.logcumsumexp(x * 3, -1), randn(g, 32, 200))


def sort(g: torch.Generator) -> Case:
    return one(lambda x: torch.sort(x, dim=-1), randn(g, 8, 64))


def max_pool(g: torch.Generator) -> Case:
    return one(lambda x: F.max_pool2d(x, 3, stride=2, padding=1), randn(g, 2, 16, 33, 31))


def avg_pool(g: torch.Generator) -> Case:
    return one(lambda x: (F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, (5, 7))), randn(g, 2, 16, 32, 30))


def interpolate(g: torch.Generator) -> Case:
    def f(x):
        return (
            F.interpolate(x, scale_factor=2, mode="nearest"),
            F.interpolate(x, size=(23, 37), mode="bilinear", align_corners=False),
            F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True),
        )

    return one(f, randn(g, 2, 8, 16, 20))


def rope(g: torch.Generator) -> Case:
    def f(x, cos, sin):
        x1, x2 = x[..., :32], x[..., 32:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    t = torch.arange(40)[:, None] * torch.exp(-torch.arange(32) * 0.2)[None]
    cos, sin = torch.cat((t, t), -1).cos(), torch.cat((t, t), -1).sin()
    return one(f, randn(g, 2, 4, 40, 64), cos, sin)


def layout_copies(g: torch.Generator) -> Case:
    def f(x, y):
        return torch.cat((x.transpose(1, 2), y), dim=1).contiguous() * 2, torch.stack((x, x.flip(1)), -1).sum(2)

    return one(f, randn(g, 4, 30, 20), randn(g, 4, 7, 30))


def mlp(g: torch.Generator) -> Case:
    m = randomize(nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 64), nn.LayerNorm(64)), g)
    return one(m, randn(g, 32, 128))


def mlp_dynamic(g: torch.Generator) -> Case:
    m = randomize(nn.Sequential(nn.Linear(64, 128), nn.SiLU(), nn.Linear(128, 32)), g)
    return Case(m, [(randn(g, 19, 64),), (randn(g, 45, 64),)])


def swiglu(g: torch.Generator) -> Case:
    def f(self, x):
        return (F.silu(x @ self.w1) * (x @ self.w3)) @ self.w2

    return one(
        Fn(f, w1=randn(g, 96, 256, scale=0.1), w3=randn(g, 96, 256, scale=0.1), w2=randn(g, 256, 96, scale=0.06)),
        randn(g, 24, 96),
    )


def attention(g: torch.Generator) -> Case:
    """Attention written out: scores, causal mask, softmax, weighted sum."""

    def f(q, k, v):
        s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        causal = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril()
        return torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1) @ v

    return one(f, randn(g, 2, 4, 48, 32), randn(g, 2, 4, 48, 32), randn(g, 2, 4, 48, 32))


def sdpa(g: torch.Generator) -> Case:
    """sdpa itself is one extern call on the CPU; the scaling, mask and residual around it are Triton kernels."""

    def f(q, k, v, m):
        a = F.scaled_dot_product_attention(q * 1.5, k, v)
        return a + q, F.scaled_dot_product_attention(q, k, v, attn_mask=m.tanh()) * v.sigmoid()

    m = randn(g, 1, 1, 40, 40)
    return one(f, randn(g, 2, 4, 40, 32), randn(g, 2, 4, 40, 32), randn(g, 2, 4, 40, 32), m)


def sdpa_causal(g: torch.Generator) -> Case:
    def f(q, k, v):
        return F.scaled_dot_product_attention(F.silu(q), k, v, is_causal=True) + v

    return one(f, randn(g, 2, 4, 40, 32), randn(g, 2, 4, 40, 32), randn(g, 2, 4, 40, 32))


def multihead_attention(g: torch.Generator) -> Case:
    # train(): eval without grad takes torch's fused fast path (one extern call, no Triton kernel); dropout is 0
    m = randomize(nn.MultiheadAttention(64, 4, batch_first=True), g).train()
    return one(With(m, lambda m, x: m(x, x, x, need_weights=False)[0] * 2 + x), randn(g, 2, 24, 64))


def transformer_layer(g: torch.Generator) -> Case:
    # train(): eval without grad takes torch's fused fast path (one extern call, no Triton kernel); dropout is 0
    m = randomize(nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True), g).train()
    return one(m, randn(g, 2, 24, 64))


def transformer_layer_norm_first(g: torch.Generator) -> Case:
    m = randomize(nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True), g).train()
    m.activation = F.gelu
    return one(m, randn(g, 2, 16, 64))


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.b2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.b1(self.c1(x)))
        x = F.max_pool2d(x, 2)
        x = F.silu(self.b2(self.c2(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def cnn(g: torch.Generator) -> Case:
    return one(randomize(SmallCNN(), g), randn(g, 2, 3, 32, 32))


def cnn_depthwise(g: torch.Generator) -> Case:
    m = randomize(
        nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.BatchNorm2d(8), nn.Hardswish(), nn.Conv2d(8, 16, 1)),
        g,
    )
    return one(m, randn(g, 2, 8, 20, 20))


def train_mlp(g: torch.Generator) -> Case:
    m = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    return one(randomize(m, g).train(), randn(g, 16, 32), torch.randint(0, 10, (16,), generator=g))


def train_cnn(g: torch.Generator) -> Case:
    return one(randomize(SmallCNN(), g).train(), randn(g, 4, 3, 16, 16), torch.randint(0, 10, (4,), generator=g))


def user_kernel(g: torch.Generator) -> Case:
    """torch.compile of a function calling a user @triton.jit kernel (Inductor compiles it with its own)."""
    import triton
    import triton.language as tl

    @triton.jit
    def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha + tl.load(y_ptr + offs, mask=m), mask=m)

    def f(x, y):
        out = torch.empty_like(x)
        n = x.numel()
        scale_add[(triton.cdiv(n, 256),)](x, y, out, n, 2.5, BLOCK=256)
        return torch.relu(out) + 1

    return one(f, randn(g, 1000), randn(g, 1000))


def user_kernel_autotune(g: torch.Generator) -> Case:
    """A user kernel under @triton.autotune: Inductor benchmarks its configs on the CPU."""
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def row_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(out_ptr + offs, tl.exp(x) * 0.5, mask=m)

    def f(x):
        out = torch.empty_like(x)
        n = x.numel()
        row_scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out.sum()

    return one(f, randn(g, 3000))


def mm_template(g: torch.Generator) -> Case:
    return one(lambda a, b, c: torch.relu(a @ b + c), randn(g, 64, 96), randn(g, 96, 80), randn(g, 80))


def conv_template_nobias(g: torch.Generator) -> Case:
    m = randomize(nn.Conv2d(8, 16, 3, padding=1, bias=False), g)
    return one(With(m, lambda m, x: F.relu(m(x))), randn(g, 2, 8, 12, 12))


def conv_template(g: torch.Generator) -> Case:
    return one(With(randomize(nn.Conv2d(8, 16, 3, padding=1), g), lambda m, x: F.relu(m(x))), randn(g, 2, 8, 12, 12))


_AUTOTUNE = {"max_autotune": True, "benchmark_epilogue_fusion": False}

W = Workload
WORKLOADS: list[Workload] = [
    W("pointwise_chain", pointwise_chain),
    W("pointwise_chain_fp16", pointwise_chain, torch.float16),
    W("pointwise_chain_bf16", pointwise_chain, torch.bfloat16),
    W("pointwise_dynamic", pointwise_dynamic, dynamic=True),
    W("pointwise_bwd", pointwise_chain, backward=True),
    W("broadcast_bias", broadcast_bias),
    W("broadcast_bias_bf16", broadcast_bias, torch.bfloat16),
    W("transcendental", transcendental),
    W("special_extreme", special_extreme),
    W("rounding", rounding),
    W("nan_inf", nan_inf),
    W("fp64_pointwise", fp64_pointwise, torch.float64),
    W("int64_arith", int64_arith, also=("int64",)),
    W("int32_arith", int32_arith, also=("int32",)),
    W("gather_int64", gather_int64, also=("i64 index",)),
    W("scatter_add", scatter_add, also=("i64 index",)),
    W("layer_norm", layer_norm),
    W("layer_norm_fp16", layer_norm, torch.float16),
    W("layer_norm_dynamic", layer_norm_dynamic, dynamic=True),
    W("layer_norm_bwd", layer_norm, backward=True),
    W("rms_norm", rms_norm),
    W("rms_norm_bf16", rms_norm, torch.bfloat16),
    W("batch_norm_eval", batch_norm_eval),
    W("group_norm", group_norm),
    W("softmax", softmax),
    W("softmax_bf16", softmax, torch.bfloat16),
    W("softmax_dim0", softmax_dim0),
    W("softmax_dynamic", softmax_dynamic, dynamic=True),
    W("softmax_bwd", softmax, backward=True),
    W("log_softmax", log_softmax),
    W("masked_softmax", masked_softmax),
    W("cross_entropy", cross_entropy, also=("i64 index",)),
    W("cross_entropy_bwd", cross_entropy, backward=True),
    W("cross_entropy_smooth_bwd", cross_entropy_smooth, backward=True),
    W("cross_entropy_dynamic", cross_entropy_dynamic, dynamic=True),
    W("nll_loss", nll_loss),
    W("embedding", embedding, also=("i64 index",)),
    W("embedding_bwd", embedding_module, backward=True, also=("i64 index",)),
    W("reductions", reductions, also=("int64 argmax",)),
    W("reductions_dynamic", reductions_dynamic, dynamic=True),
    W("var_mean", var_mean),
    W("cumsum", cumsum),
    W("cumsum_int64", cumsum_int64, also=("int64",)),
    W("logcumsumexp", logcumsumexp),
    W("sort", sort, timeout=900),
    W("max_pool", max_pool),
    W("max_pool_bwd", max_pool, backward=True),
    W("avg_pool", avg_pool),
    W("interpolate", interpolate),
    W("interpolate_bwd", interpolate, backward=True),
    W("rope", rope),
    W("rope_bf16", rope, torch.bfloat16),
    W("layout_copies", layout_copies),
    W("mlp", mlp),
    W("mlp_fp16", mlp, torch.float16),
    W("mlp_dynamic", mlp_dynamic, dynamic=True),
    W("mlp_bwd", mlp, backward=True),
    W("swiglu_bf16", swiglu, torch.bfloat16),
    W("attention", attention),
    W("attention_bf16", attention, torch.bfloat16),
    W("sdpa", sdpa),
    W("sdpa_causal_bwd", sdpa_causal, backward=True),
    W("multihead_attention", multihead_attention),
    W("transformer_layer", transformer_layer),
    W("transformer_layer_bwd", transformer_layer, backward=True),
    W("transformer_layer_bf16", transformer_layer_norm_first, torch.bfloat16),
    W("cnn", cnn),
    W("cnn_bwd", cnn, backward=True),
    W("cnn_depthwise", cnn_depthwise),
    W("train_mlp", train_mlp, train=True),
    W("train_cnn", train_cnn, train=True),
    W("user_kernel", user_kernel),
    W("user_kernel_autotune", user_kernel_autotune),
    W("softmax_coordesc", softmax, config={"coordinate_descent_tuning": True}),
    W("mm_template_autotune", mm_template, config={**_AUTOTUNE, "max_autotune_gemm_backends": "TRITON"}),
    W("conv_template_autotune", conv_template, config={**_AUTOTUNE, "max_autotune_conv_backends": "TRITON"}),
    W(
        "conv_template_nobias_autotune",
        conv_template_nobias,
        config={**_AUTOTUNE, "max_autotune_conv_backends": "TRITON"},
    ),
]
#: causes found for failures that are not the SDK's (the report prints them beside the error)
KNOWN_CAUSES = {
    "conv_template_autotune": (
        "torch 2.13 Inductor: on a CPU device its conv lowering keeps the bias as a kernel input (kernel/conv.py "
        "peels it off only for GPUs), while its Triton conv template takes none: the benchmark call passes one "
        "argument more than the template kernel has (the same conv without bias passes)"
    ),
}
BY_NAME = {w.name: w for w in WORKLOADS}
assert len(BY_NAME) == len(WORKLOADS), "workload names must be unique"

#: the default test run's slice: fast, and together they cover pointwise, reductions, int64 indexing, fp16/bf16,
#: dynamic shapes and a backward graph
CI = ("pointwise_chain", "layer_norm", "softmax_bf16", "embedding", "pointwise_dynamic", "cross_entropy_bwd")
#: environment variable that makes the test run take the whole corpus
FULL_ENV = "TBS_INDUCTOR_CORPUS"


def selected() -> list[Workload]:
    if os.environ.get(FULL_ENV, "") not in ("", "0"):
        return list(WORKLOADS)
    return [BY_NAME[n] for n in CI]


# ---- running and comparing ----------------------------------------------------------------------------------------


def _cast(v: Any, dtype: torch.dtype) -> Any:
    if isinstance(v, torch.Tensor) and v.is_floating_point():
        return v.detach().to(dtype)
    if isinstance(v, (tuple, list)):
        return type(v)(_cast(x, dtype) for x in v)
    return v


def _instance(fn: Any, dtype: torch.dtype) -> Any:
    if isinstance(fn, nn.Module):
        return copy.deepcopy(fn).to(dtype)
    return fn


def _tensors(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in _tensors(out[k])]
    return []


def _loss(outs: list[torch.Tensor], seed: int) -> torch.Tensor:
    """A fixed random projection of the floating outputs (its gradients are what the backward check compares)."""
    g = torch.Generator().manual_seed(seed)
    total = 0
    for o in outs:
        if o.is_floating_point() and o.requires_grad:
            total = total + (o.double() * torch.randn(o.shape, generator=g, dtype=torch.float64)).sum()
    return total


def _forward(fn: Any, args: tuple[Any, ...], backward: bool, seed: int) -> list[torch.Tensor]:
    """Outputs, then (backward) the gradients of the floating inputs and of the module's parameters."""
    if not backward:
        with torch.no_grad():
            return [t.detach() for t in _tensors(fn(*args))]
    leaves = [a.requires_grad_(True) for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    params = list(fn.parameters()) if isinstance(fn, nn.Module) else []
    outs = _tensors(fn(*args))
    grads = torch.autograd.grad(_loss(outs, seed), leaves + params, allow_unused=True)
    return [t.detach() for t in outs] + [g for g in grads if g is not None]


def _train(model: nn.Module, args: tuple[Any, ...], compile_fn: Callable[[Any], Any] | None) -> list[torch.Tensor]:
    """Three SGD-with-momentum steps of cross-entropy training; the parameters after them (and the losses)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    fwd = compile_fn(model) if compile_fn else model
    step = compile_fn(opt.step) if compile_fn else opt.step
    x, t = args
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(fwd(x), t)
        loss.backward()
        step()
        losses.append(loss.detach())
    return [torch.stack(losses)] + [p.detach().clone() for p in model.parameters()]


def compare(
    got: list[torch.Tensor], eager: list[torch.Tensor], ref: list[torch.Tensor], dtype: torch.dtype
) -> str | None:
    """None if `got` is as close to `ref` (fp64) as eager in `dtype` is (times MULTIPLIER, plus the floor), else why
    not. Integer and boolean outputs must equal eager's."""
    if len(got) != len(eager):
        return f"{len(got)} outputs, eager has {len(eager)}"
    for i, (c, e, r) in enumerate(zip(got, eager, ref)):
        if c.shape != e.shape:
            return f"output {i}: shape {tuple(c.shape)}, eager {tuple(e.shape)}"
        if c.dtype != e.dtype:
            return f"output {i}: dtype {c.dtype}, eager {e.dtype}"
        if not e.is_floating_point():
            if not torch.equal(c, e):
                bad = (c != e).nonzero()[0].tolist()
                return f"output {i} ({e.dtype}): {int((c != e).sum())} elements differ from eager, first at {bad}"
            continue
        c64, e64, r64 = c.double(), e.double(), r.double()
        finite = torch.isfinite(r64)
        for what, mask in (("NaN", torch.isnan), ("+inf", lambda t: t == math.inf), ("-inf", lambda t: t == -math.inf)):
            if not torch.equal(mask(c64) & ~finite, mask(e64) & ~finite):
                return f"output {i}: {what} where eager has none, or the reverse (reference non-finite)"
        if not torch.equal(torch.isfinite(c64) | ~finite, torch.isfinite(e64) | ~finite):
            return f"output {i}: non-finite values where eager and the reference are finite"
        if not finite.any():
            continue
        ok = finite & torch.isfinite(e64)
        err = (c64 - r64)[ok].abs().max().item() if ok.any() else 0.0
        base = (e64 - r64)[ok].abs().max().item() if ok.any() else 0.0
        scale = max(1.0, r64[finite].abs().max().item())
        bound = MULTIPLIER * base + FLOOR.get(e.dtype, FLOOR[dtype]) * scale
        if not err <= bound:
            return (
                f"output {i} {tuple(e.shape)} {str(e.dtype).removeprefix('torch.')}: max error {err:.3g} vs the fp64 "
                f"reference; eager's is {base:.3g} (bound {bound:.3g})"
            )
    return None


@contextlib.contextmanager
def inductor_config(extra: dict[str, Any]) -> Any:
    import torch._inductor.config as cfg

    with cfg.patch({**BASE_CONFIG, **extra}):
        yield


def _face_name() -> str:
    from triton.backends import backends

    return backends["cpu"].compiler.face_base().name


@contextlib.contextmanager
def _recording_launches(into: list[str]) -> Any:
    """Record which face compiled each kernel Triton loads (what Inductor's launchers then run)."""
    from triton_backend_sdk.faces import FACE_OF, DriverFace

    checked = DriverFace._checked_launcher

    def spy(self: Any, src: Any, metadata: Any) -> Any:
        into.append(getattr(metadata, FACE_OF, "?"))
        return checked(self, src, metadata)

    DriverFace._checked_launcher = spy  # type: ignore[method-assign]
    try:
        yield
    finally:
        DriverFace._checked_launcher = checked  # type: ignore[method-assign]


def run(w: Workload) -> str | None:
    """Compile and compare one workload on the current "cpu" face; None if it matches, else what differed."""
    import torch._dynamo
    from torch._inductor import metrics

    seed = zlib.crc32(w.name.encode())
    case = w.build(torch.Generator().manual_seed(seed))
    ref_dtype = torch.float64
    torch._dynamo.reset()
    metrics.reset()
    compile_fn = lambda f: torch.compile(f, dynamic=True if w.dynamic else None)
    base, launched = _face_name(), []
    with inductor_config(w.config), _recording_launches(launched):
        for k, args in enumerate(case.calls):
            if w.train:
                model = case.fn
                got = _train(_instance(model, w.dtype), _cast(args, w.dtype), compile_fn)
                eager = _train(_instance(model, w.dtype), _cast(args, w.dtype), None)
                ref = _train(_instance(model, ref_dtype), _cast(args, ref_dtype), None)
            else:
                fn = _instance(case.fn, w.dtype)
                compiled = compile_fn(fn)
                got = _forward(compiled, _cast(args, w.dtype), w.backward, seed)
                eager = _forward(_instance(case.fn, w.dtype), _cast(args, w.dtype), w.backward, seed)
                ref = _forward(_instance(case.fn, ref_dtype), _cast(args, ref_dtype), w.backward, seed)
            low = [t.dtype for t in ref if t.is_floating_point() and t.dtype != ref_dtype]
            if low:
                return f"corpus error: the reference computed {low[0]} outputs (a weight outside the module?)"
            why = compare(got, eager, ref, w.dtype)
            if why:
                return f"call {k}: {why}" if len(case.calls) > 1 else why
    if metrics.generated_kernel_count == 0:
        return "Inductor generated no kernel: the Triton route was not exercised"
    if not launched:
        return "no Triton kernel was loaded through the 'cpu' face"
    if set(launched) != {base}:
        return f"kernels compiled by the {sorted(set(launched))} face(s) ran; the 'cpu' face is {base}"
    return None


# ---- the corpus runner --------------------------------------------------------------------------------------------


def _child(backend: str, name: str) -> int:
    from triton_backend_sdk.backends import cpu

    cpu.use(backend)
    t = time.perf_counter()
    try:
        why = run(BY_NAME[name])
    except Exception as e:  # noqa: BLE001 - the result is the error
        why = f"{type(e).__name__}: {_first_line(str(e))}"
    print(f"RESULT {'pass' if why is None else 'FAIL'} {time.perf_counter() - t:.1f}s {why or ''}", flush=True)
    return 0


def _first_line(msg: str) -> str:
    import re

    lines = [ln.strip() for ln in msg.strip().splitlines() if ln.strip()]
    # Inductor wraps the cause: keep the innermost "SomeError: ..." it names, else the first line
    for ln in reversed(lines):
        m = re.search(r"([A-Z]\w*(?:Error|Exception): .*)", ln)
        if m:
            inner = re.findall(r"[A-Z]\w*(?:Error|Exception): ", m.group(1))
            return m.group(1)[m.group(1).rfind(inner[-1]) :][:400] if inner else m.group(1)[:400]
        if "error:" in ln:
            return ln[:400]
    return (lines[0] if lines else "")[:400]


def run_one(backend: str, w: Workload) -> tuple[str, float, str]:
    """(status, seconds, cause) of one workload in a fresh interpreter: pass, FAIL, crash (signal/exit) or timeout."""
    env = dict(os.environ)
    env.pop("TRITON_DEFAULT_BACKEND", None)
    t = time.perf_counter()
    try:
        r = subprocess.run(
            [sys.executable, __file__, "--child", backend, w.name],
            env=env,
            capture_output=True,
            text=True,
            timeout=w.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t, f"no result within {w.timeout} s"
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            _, status, secs, *why = line.split(" ", 3)
            return status, float(secs.rstrip("s")), (why[0] if why else "")
    tail = [ln for ln in (r.stderr or "").strip().splitlines() if ln.strip()][-3:]
    return "crash", time.perf_counter() - t, f"exit status {r.returncode}: {' | '.join(tail)[:400]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", action="append", help="SDK backend behind Triton's 'cpu' (repeatable)")
    p.add_argument("--out", help="write the results table to this file")
    p.add_argument("-k", default="", help="only workloads whose name contains this")
    p.add_argument("--from-log", help="rebuild the table from the per-workload lines a run printed (no new run)")
    p.add_argument("--note", default="", help="a line to add under the header (e.g. the commit the run was made at)")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        return _child(*a.child)
    backends = a.backend or ["cpu_ref", "opencl"]
    chosen = [w for w in WORKLOADS if a.k in w.name]
    rows: dict[str, dict[str, tuple[str, float, str]]] = {}
    if a.from_log:
        with open(a.from_log) as f:
            for line in f:
                parts = line.rstrip("\n").split(None, 4)
                if len(parts) >= 4 and parts[0] in BY_NAME and parts[1] in backends and parts[3].endswith("s"):
                    rows.setdefault(parts[0], {})[parts[1]] = (parts[2], float(parts[3][:-1]), (parts[4:] or [""])[0])
        chosen = [w for w in chosen if all(b in rows.get(w.name, {}) for b in backends)]
    for w in [] if a.from_log else chosen:
        rows[w.name] = {}
        for b in backends:
            rows[w.name][b] = res = run_one(b, w)
            print(f"{w.name:30} {b:8} {res[0]:7} {res[1]:6.1f}s {res[2]}", flush=True)
    text = report(chosen, backends, rows, a.note)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if all(r[0] == "pass" for row in rows.values() for r in row.values()) else 1


def report(
    chosen: list[Workload], backends: list[str], rows: dict[str, dict[str, tuple[str, float, str]]], note: str = ""
) -> str:
    import platform

    import triton

    lines = [
        (
            "Inductor CPU-Triton route corpus (tests/inductor_corpus.py): torch.compile with "
            'torch._inductor.config.cpu_backend = "triton", compared with eager (fp64 reference, tolerance: 4x '
            "eager's own error plus a per-dtype floor)."
        ),
        f"torch {torch.__version__}, triton {triton.__version__}, python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; command: python tests/inductor_corpus.py "
        + " ".join(f"--backend {b}" for b in backends)
        + " --out benchmarks/results/inductor_corpus.txt",
        *([note] if note else []),
        "",
    ]
    for b in backends:
        counts: dict[str, int] = {}
        for row in rows.values():
            counts[row[b][0]] = counts.get(row[b][0], 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: kv[0] != "pass"))
        lines.append(f"{b}: {summary} (of {len(rows)})")
    lines.append("")
    head = f"{'workload':30} {'tags':30} " + " ".join(f"{b:>16}" for b in backends)
    lines += [head, "-" * len(head)]
    for w in chosen:
        cells = " ".join(f"{rows[w.name][b][0] + f' {rows[w.name][b][1]:.0f}s':>16}" for b in backends)
        lines.append(f"{w.name:30} {w.tags:30} {cells}")
    lines += ["", "Failures and their causes:"]
    any_failed = False
    for w in chosen:
        for b in backends:
            status, _, why = rows[w.name][b]
            if status != "pass":
                any_failed = True
                known = KNOWN_CAUSES.get(w.name)
                lines.append(f"- {w.name} [{b}] {status}: {why}" + (f"\n  cause: {known}" if known else ""))
    if not any_failed:
        lines.append("- none")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    raise SystemExit(main())
