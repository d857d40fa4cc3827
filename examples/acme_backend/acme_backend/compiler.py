"""What Triton loads for `acme`: one concrete backend class.

ACME's "device" is the host CPU, so the backend reuses cpu_ref's code generator and changes three things: its own
descriptor (name `acme`, a wider vector unit), one SDK IR pass (`acme-recip-div`), and one lowering rule of its own
(for the `acme.recip` op that pass introduces), in a rule table derived from cpu_ref's and returned by `rule_table`
(cpu_ref's stages then lower with it: no stage method is copied).
Import cpu_ref's module, not its class: Triton requires exactly one concrete backend class in this module.
"""

from __future__ import annotations

from triton.backends.compiler import GPUTarget
from triton_backend_sdk.backends.cpu_ref import compiler as cpu_ref
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import IRPass

from . import __version__
from .passes import RecipDiv


class AcmeBackend(cpu_ref.CPURefBackend):
    name = "acme"
    version = __version__
    sdk_api = (1, 1)

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        host = cpu_ref.host_descriptor()
        return TargetDescriptor(
            name="acme",
            arch=host.arch,
            warp_size=1,
            max_threads_per_program=1 << 16,
            vector_width_bits=max(host.vector_width_bits, 256),
            num_compute_units=host.num_compute_units,
            features=host.features,
        )

    def ir_passes(self, options: Options) -> list[IRPass]:
        return [*super().ir_passes(options), RecipDiv(min_elements=2)]

    def rule_table(self, options: Options) -> RuleTable:
        from .rules import RULES

        return RULES
