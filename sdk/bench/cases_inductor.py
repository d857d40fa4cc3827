"""torch.compile's CPU-Triton route as benchmark cases: the kernels Inductor itself writes, on an SDK backend.

Each case compiles one small torch function twice, with `cpu_backend="triton"` (ours: Inductor's Triton kernels on
the backend being measured, through the SDK's "cpu" face) and with `cpu_backend="cpp"` (Inductor's own C++/OpenMP
code, the peer a torch.compile user on a CPU compares with), plus eager torch. The functions are the fused shapes
that dominate real models: GELU (erf and tanh forms, which Inductor writes as `libdevice` calls), an eval-mode batch
norm (per-channel parameters indexed by `(i // HW) % C`), RMS norm, layer norm, softmax and log-softmax. Times are
of the compiled callables as a user calls them (output allocation included, the same on both sides).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from .case import Case, Prepared, Size, check

Fn = Callable[..., torch.Tensor]


def _compiled(fn: Fn, cpu_backend: str) -> Fn:
    return torch.compile(fn, options={"cpu_backend": cpu_backend})


def _use_face(backend: str) -> None:
    """Inductor's Triton route asks Triton for backend "cpu": make it a face of the backend being measured."""
    from triton_backend_sdk.backends import cpu

    cpu.use(backend)


def _case(make: Callable[[Size], tuple[Fn, tuple[torch.Tensor, ...], float]], rtol: float, atol: float):
    def build(size: Size, backend: str) -> Prepared:
        fn, args, work = make(size)
        _use_face(backend)
        # one compiled function per build: earlier builds' cache entries (another backend's face, another size) must
        # neither be reused nor count towards dynamo's recompile limit, past which it would silently run eager
        torch._dynamo.reset()
        ours, cpp = _compiled(fn, "triton"), _compiled(fn, "cpp")
        out: dict[str, torch.Tensor] = {}

        def run_ours() -> None:
            out["y"] = ours(*args)

        return Prepared(
            ours=run_ours,
            peers={"torch": lambda: fn(*args), "inductor_cpp": lambda: cpp(*args)},
            check=lambda: check(out["y"], fn(*args), rtol, atol),
            work=work,
        )

    return build


def _gelu(approximate: str) -> Callable[[Size], tuple[Fn, tuple[torch.Tensor, ...], float]]:
    def make(size: Size) -> tuple[Fn, tuple[torch.Tensor, ...], float]:
        x = torch.randn(size["n"])
        return (lambda x: F.gelu(x, approximate=approximate)), (x,), 2 * 4 * x.numel()

    return make


def _batch_norm(size: Size) -> tuple[Fn, tuple[torch.Tensor, ...], float]:
    n, c, hw = size["N"], size["C"], size["HW"]
    x = torch.randn(n, c, hw, hw)
    mean, var, w, b = torch.randn(c), torch.rand(c) + 0.5, torch.randn(c), torch.randn(c)

    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.relu(F.batch_norm(x, mean, var, w, b, training=False))

    return fn, (x,), 2 * 4 * x.numel()


def _rows(fn: Fn) -> Callable[[Size], tuple[Fn, tuple[torch.Tensor, ...], float]]:
    def make(size: Size) -> tuple[Fn, tuple[torch.Tensor, ...], float]:
        x = torch.randn(size["M"], size["N"])
        return fn, (x,), 2 * 4 * x.numel()

    return make


def _rms_norm(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def _layer_norm(x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:])


_FLAT = {"full": {"n": 1 << 22}, "quick": {"n": 1 << 20}, "smoke": {"n": 1 << 12}}
_ROWS = {"full": {"M": 4096, "N": 1024}, "quick": {"M": 1024, "N": 1024}, "smoke": {"M": 8, "N": 256}}
_BN = {"full": {"N": 16, "C": 64, "HW": 64}, "quick": {"N": 4, "C": 64, "HW": 64}, "smoke": {"N": 1, "C": 4, "HW": 8}}
_ROUNDS = {"full": (9, 3), "quick": (5, 3), "smoke": (2, 1)}

INDUCTOR_CASES: tuple[Case, ...] = (
    # atol: eager F.gelu is itself 1.05e-6 off the float64 result at this size (1 + erf(x/√2) cancels for x < 0)
    Case("inductor_gelu_erf", "GB/s", _FLAT, _case(_gelu("none"), 1e-5, 2.5e-6), rounds=_ROUNDS),
    Case("inductor_gelu_tanh", "GB/s", _FLAT, _case(_gelu("tanh"), 1e-5, 1e-6), rounds=_ROUNDS),
    Case("inductor_batch_norm_relu", "GB/s", _BN, _case(_batch_norm, 1e-5, 1e-5), rounds=_ROUNDS),
    Case("inductor_rms_norm", "GB/s", _ROWS, _case(_rows(_rms_norm), 1e-5, 1e-5), rounds=_ROUNDS),
    Case("inductor_layer_norm", "GB/s", _ROWS, _case(_rows(_layer_norm), 1e-5, 1e-5), rounds=_ROUNDS),
    Case("inductor_softmax", "GB/s", _ROWS, _case(_rows(lambda x: torch.softmax(x, -1)), 1e-5, 1e-6), rounds=_ROUNDS),
    Case(
        "inductor_log_softmax", "GB/s", _ROWS, _case(_rows(lambda x: F.log_softmax(x, -1)), 1e-5, 1e-5), rounds=_ROUNDS
    ),
)

__all__ = ["INDUCTOR_CASES"]
