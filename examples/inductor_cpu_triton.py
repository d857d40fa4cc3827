"""torch.compile a small model with Inductor's Triton backend for CPU tensors, on cpu_ref and on opencl.

    python examples/inductor_cpu_triton.py                            # cpu_ref
    TRITON_DEFAULT_BACKEND=opencl python examples/inductor_cpu_triton.py  # opencl (PoCL on the CPU here)

The only setting is `torch._inductor.config.cpu_backend = "triton"`: Inductor then generates Triton kernels for CPU
tensors and compiles them for Triton's "cpu" backend, which this package registers (a face of cpu_ref, or of opencl
when TRITON_DEFAULT_BACKEND=opencl). `--backend both` runs the model on each in turn in one process
(`triton_backend_sdk.backends.cpu.use(name)` switches the backend behind "cpu").
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

torch._inductor.config.cpu_backend = "triton"


class Block(nn.Module):
    """Pre-norm transformer block: attention written out (softmax in a Triton kernel), a GELU MLP, residuals."""

    def __init__(self, d: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        att = att.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.n2(x))))


def run(label: str) -> None:
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(4, 32, 64)
    torch._dynamo.reset()
    compiled = torch.compile(model)
    t = time.perf_counter()
    with torch.no_grad():
        got = compiled(x)
        first = time.perf_counter() - t
        want = model(x)
    err = (got - want).abs().max().item()
    import triton

    print(f"{label}: max |compiled - eager| = {err:.2e}; compile + first run {first:.1f} s")
    print(f"  Triton's active driver during the run: {triton.runtime.driver.active!r}")
    assert err < 1e-4, "compiled result differs from eager"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["default", "cpu_ref", "opencl", "both"], default="default")
    a = p.parse_args()
    from triton.backends import backends

    if a.backend == "default":
        cls = backends["cpu"].compiler
        run(f"'cpu' = {cls.face_base().name}" if hasattr(cls, "face_base") else "'cpu' (another package's)")
        return
    from triton_backend_sdk.backends import cpu

    for name in ["cpu_ref", "opencl"] if a.backend == "both" else [a.backend]:
        cpu.use(name)
        run(f"'cpu' = {name}")


if __name__ == "__main__":
    main()
