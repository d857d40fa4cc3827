"""What Triton loads for `acme`: one concrete driver class (cpu_ref's, under ACME's name)."""

from __future__ import annotations

from triton_backend_sdk.backends.cpu_ref import driver as cpu_ref


class AcmeDriver(cpu_ref.CPURefDriver):
    backend_name = "acme"

    @classmethod
    def compiler_class(cls) -> type:
        from .compiler import AcmeBackend

        return AcmeBackend

    @classmethod
    def default_active(cls) -> bool:
        """Active only when selected (TRITON_DEFAULT_BACKEND=acme or triton_backend_sdk.use("acme"))."""
        return False
