"""The target language as data: what differs between C dialects is spelled here, not in the rules.

`CStyleLanguage` names the constructs the shared C-like rules need: qualifiers, work-item ids, barriers, half
loads/stores, extension pragmas, and the built-ins C lacks (bit reinterpretation, rounding conversions, atomics,
vectors, integer min/max/clz/popcount/mul_hi). It spells C99 where C99 has the construct (casts, `printf`, the
type-generic math of <tgmath.h>) and raises `LanguageError` where it has none; `OpenCLLanguage` fills everything in
for OpenCL C 1.2. Another C dialect (a vendor's OpenCL-like language, CUDA C, ...) is a small subclass that overrides
attributes or methods, and the rule table stays the same: the rules spell only C (operators, casts, statements, and
the scalar type names `uchar`/`ushort`/`uint`/`ulong`, which a dialect without them typedefs in its `prelude`) and
ask `ctx.lang` for the rest. tests/test_opencl_language.py holds the rule files to that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: C99's type-generic math (<tgmath.h>, <math.h> classification macros): one name for float and double, which the
#: rules call by that name unless a dialect's `builtins` renames it
C99_MATH = frozenset(
    {
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign", "cos", "cosh",
        "erf", "erfc", "exp", "exp2", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "hypot",
        "isinf", "isnan", "ldexp", "lgamma", "log", "log10", "log1p", "log2", "logb", "nextafter", "pow",
        "remainder", "rint", "round", "sin", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc",
    }
)  # fmt: skip


class LanguageError(NotImplementedError):
    """The dialect has no spelling for a construct a rule needs (the subclass must provide it)."""


#: descriptor features of the device clocks (set by `backends/opencl/clock.py`, read by the dialect's `clock`)
CLOCK_GLOBALTIMER = "clock_ptx_globaltimer"
CLOCK_CYCLE_COUNTER = "clock_cycle_counter"


@dataclass(frozen=True)
class DeviceClock:
    """A clock a device can read, where the descriptor has `feature`: `read` (format with {out}) is a statement
    storing the reading in the `ulong` variable `out`; `cycles`: it counts cycles, not nanoseconds (the kernel
    scales it by a factor the runtime measures, render/clock.py)."""

    feature: str
    read: str
    cycles: bool


#: descriptor features of NVIDIA's inline-PTX warp shuffles and approximate exp2 (backends/opencl/ptx_features.py)
WARP_SHFL_PTX = "warp_ptx_shfl_sync32"  # 32-lane warps of consecutive local ids, shfl.sync (sm_70 and later)
EXP2_PTX_APPROX = "exp2_ptx_approx_ftz"  # ex2.approx.ftz.f32, what Triton's CUDA path computes tl.exp with


@dataclass(frozen=True)
class WarpShuffle:
    """A butterfly exchange within warps of `width` work-items (consecutive local ids, run in lockstep), where the
    descriptor has `feature`: `bfly` (format with {out}, {x}, {mask}) is a statement setting the `uint` `out` to
    the `uint` `x` of the work-item whose lane is this one's xor `mask`. Every work-item of the warp must run it."""

    feature: str
    width: int
    bfly: str


#: descriptor features of clang-compiled OpenCL C on an x86 CPU device (PoCL; backends/opencl/x86_features.py)
X86_NONTEMPORAL_STORE = "x86_clang_nontemporal_store"  # __builtin_nontemporal_store, ordered by sfence
X86_TUNE_WIDE = "x86_clang_tune_wide"  # AVX-512 whose compiler tunes for 256-bit vectors unless told otherwise


@dataclass(frozen=True)
class StreamingStore:
    """A store that bypasses the caches, where the descriptor has `feature`: `store` (format with {value}, a vector,
    and {ptr}, a pointer to that vector type aligned to its size) and `fence`, a statement ordering such stores
    before the program's end (render/streaming.py)."""

    feature: str
    store: str
    fence: str


@dataclass(frozen=True)
class CStyleLanguage:
    kernel_prefix: str = ""
    #: prefix of the device entry point's name: Triton's kernel names are the user's (`kernel`, `sin`, `main`,
    #: `double`, ...) and may be keywords or built-ins of the device language, so the entry never uses one as is
    entry_prefix: str = "tb_"
    global_qual: str = ""
    local_qual: str = ""
    constant_qual: str = "const"
    #: a barrier that also orders the group's local-memory accesses
    barrier: str = ""
    #: a barrier that also orders global memory (`tl.debug_barrier`)
    full_barrier: str = ""
    #: a fence around atomics with acquire/release semantics
    global_fence: str = ""
    #: (descriptor feature, statement) of device-scope fences a device compiler takes beside `global_fence`, which
    #: may order memory only as the work-group sees it; the first the device has is used (`device_fence`)
    device_fences: tuple[tuple[str, str], ...] = ()
    local_id: str = ""
    group_id: str = ""  # format with {axis}
    num_groups: str = ""  # format with {axis}
    #: the group id within the whole grid when the launch runs it in pieces (each enqueued with a global offset of
    #: its first group × the group size along {axis}; {per_group} divides by the size); empty: the language cannot,
    #: launches are never split
    chunk_group_id: str = ""
    #: f16 in memory: load to float / store from float (round to nearest even)
    half_load: str = ""  # format with {ptr}
    half_store: str = ""  # format with {value}, {ptr}
    unroll_pragma: str = ""
    #: attribute fixing the work-group size, format with {size}
    fixed_group_size: str = ""
    #: attribute after a variable's declarator aligning it to {n} bytes (the local scratch area)
    aligned: str = ""
    #: declaration prefix of a helper the device compiler must inline: PoCL leaves a tile loop scalar around a call
    #: to a large `inline` helper (its inliner declines; the inline erf ran at 5 ns per element, 1 with this)
    forced_inline: str = "inline"
    fp64_pragma: str = ""
    int64_atomics_pragma: str = ""
    fp_contract_off: str = ""
    #: text at the top of every program (a dialect's typedefs of the scalar type names the rules use, say)
    prelude: str = ""
    #: built-in functions by the name the rules use → the dialect's name: the integer ones C lacks (`min`, `max`,
    #: `mul_hi`, `clz`, `popcount`; integer abs is rendered, not called), math beyond C99 (`rsqrt`, `exp10`), and any
    #: C99 math function the dialect spells differently
    builtins: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: the device clocks the dialect can read, in order of preference (C has none a kernel may call)
    clocks: tuple[DeviceClock, ...] = ()
    #: warp shuffles a device compiler takes, in order of preference (C has none)
    warp_shuffles: tuple[WarpShuffle, ...] = ()
    #: (descriptor feature, statement) of an approximate fp32 2^x, format with {out} and {x} (float variables)
    approx_exp2s: tuple[tuple[str, str], ...] = ()
    #: non-temporal stores a device compiler takes, in order of preference (C has none)
    streaming_stores: tuple[StreamingStore, ...] = ()
    #: (descriptor feature, attribute) put before the kernel: code-generation tuning a device needs
    kernel_tunings: tuple[tuple[str, str], ...] = ()

    def _missing(self, what: str) -> LanguageError:
        return LanguageError(f"{type(self).__name__} has no spelling for {what}")

    # ---- functions -----------------------------------------------------------------------------------------------

    def function(self, name: str) -> str:
        """The dialect's name of built-in `name` (C99's type-generic math passes through)."""
        spelled = self.builtins.get(name)
        if spelled is not None:
            return spelled
        if name in C99_MATH:
            return name
        raise self._missing(f"the built-in function {name!r}")

    def call(self, name: str, *args: str) -> str:
        return f"{self.function(name)}({', '.join(args)})"

    def clock(self, features: frozenset[str]) -> DeviceClock | None:
        """The first of `clocks` whose feature the device has, or None: the device has no clock to read."""
        return next((c for c in self.clocks if c.feature in features), None)

    def device_fence(self, features: frozenset[str]) -> str | None:
        """A fence ordering global memory for every work-group of the device, where the device has one of
        `device_fences`; None where `global_fence` is all there is."""
        return next((stmt for feature, stmt in self.device_fences if feature in features), None)

    def warp_shuffle(self, features: frozenset[str]) -> WarpShuffle | None:
        """The first of `warp_shuffles` whose feature the device has, or None (reductions go through memory)."""
        return next((w for w in self.warp_shuffles if w.feature in features), None)

    def approx_exp2(self, features: frozenset[str]) -> str | None:
        """The device's approximate fp32 2^x statement where it has one of `approx_exp2s`, else None."""
        return next((stmt for feature, stmt in self.approx_exp2s if feature in features), None)

    def streaming_store(self, features: frozenset[str]) -> StreamingStore | None:
        """The first of `streaming_stores` whose feature the device has, or None (stores are ordinary)."""
        return next((s for s in self.streaming_stores if s.feature in features), None)

    def kernel_tuning(self, features: frozenset[str]) -> list[str]:
        """The attributes of `kernel_tunings` whose feature the device has."""
        return [attr for feature, attr in self.kernel_tunings if feature in features]

    def printf(self, fmt: str, *args: str) -> str:
        """A call printing `fmt` (the body of a C string literal) with `args`."""
        return f'printf("{fmt}"{"".join(", " + a for a in args)})'

    # ---- conversions -------------------------------------------------------------------------------------------

    def bitcast(self, to: str, x: str) -> str:
        """`x`'s bits as a value of type `to`, of the same size (no conversion)."""
        raise self._missing(f"reinterpreting bits as {to}")

    def convert(self, to: str, x: str, rounding: str | None = None) -> str:
        """`x` converted to `to`; `rounding` ('rtz', 'rte', 'rtp', 'rtn') overrides the default rounding."""
        if rounding is None:
            return f"(({to}){x})"
        raise self._missing(f"conversion to {to} with rounding {rounding}")

    # ---- atomics -----------------------------------------------------------------------------------------------

    def atomic(self, op: str, bits: int, ptr: str, *args: str) -> str:
        """The atomic `op` ('add', 'and', 'or', 'xor', 'xchg', 'max', 'min', 'inc', 'cmpxchg') on the `bits`-wide
        integer at `ptr`, returning the old value."""
        raise self._missing(f"the {bits}-bit atomic {op}")

    # ---- vectors -----------------------------------------------------------------------------------------------

    def vector_type(self, ctype: str, n: int) -> str:
        raise self._missing(f"vectors of {n} {ctype}")

    def vector_literal(self, ctype: str, elems: list[str]) -> str:
        raise self._missing(f"vector literals of {len(elems)} {ctype}")

    def vector_splat(self, ctype: str, n: int, x: str) -> str:
        """A vector of `n` copies of scalar `x`."""
        raise self._missing(f"vector splats of {n} {ctype}")

    def vector_load(self, n: int, ptr: str) -> str:
        """The `n` consecutive elements at `ptr` (element-aligned) as one vector."""
        raise self._missing(f"vector loads of {n} elements")

    def vector_store(self, n: int, value: str, ptr: str) -> str:
        """A statement storing vector `value` to the `n` consecutive elements at `ptr` (element-aligned)."""
        raise self._missing(f"vector stores of {n} elements")

    def array_alignment(self, nbytes: int) -> str:
        """The suffix of an array declaration that aligns it to `nbytes` ("" where the dialect cannot say; its
        `aligned_vector_load` must then not assume more than element alignment)."""
        return ""

    def aligned_vector_load(self, ctype: str, n: int, ptr: str) -> str:
        """`vector_load` where `ptr` is known aligned to the vector's size (a dialect may read it in one access)."""
        return self.vector_load(n, ptr)

    def aligned_vector_store(self, ctype: str, n: int, value: str, ptr: str) -> str:
        """`vector_store` where `ptr` is known aligned to the vector's size."""
        return self.vector_store(n, value, ptr)

    def vector_elem(self, v: str, k: int) -> str:
        raise self._missing("vector components")

    def little_endian(self) -> str:
        """A constant expression true on a little-endian device (the compiler folds it)."""
        return f"{self.vector_elem(self.bitcast(self.vector_type('uchar', 4), '1u'), 0)} == 1"


_OPENCL_BUILTINS = {
    name: name for name in ("min", "max", "mul_hi", "clz", "popcount", "rsqrt", "exp10")
}  # fmt: skip

#: OpenCL C 1.2 has no clock; these are two devices' own: NVIDIA's inline PTX global timer (nanoseconds), and clang's
#: cycle counter (the x86 TSC) on PoCL's CPU device, whose kernel compiler is clang
_OPENCL_CLOCKS = (
    DeviceClock(CLOCK_GLOBALTIMER, 'asm volatile("mov.u64 %0, %%globaltimer;" : "=l"({out}));', cycles=False),
    DeviceClock(CLOCK_CYCLE_COUNTER, "{out} = __builtin_readcyclecounter();", cycles=True),
)

#: descriptor features of NVIDIA's device-scope fences (backends/opencl/fences.py): its OpenCL compiles mem_fence to
#: `membar.cta`, which leaves another SM's L1 stale, so acquire/release between work-groups is inline PTX
FENCE_PTX_ACQ_REL = "fence_ptx_acq_rel_gpu"  # sm_70 and later
FENCE_PTX_MEMBAR_GL = "fence_ptx_membar_gl"  # any NVIDIA GPU (fence.sc.gpu on sm_70+)
_OPENCL_DEVICE_FENCES = (
    (FENCE_PTX_ACQ_REL, 'asm volatile("fence.acq_rel.gpu;" ::: "memory");'),
    (FENCE_PTX_MEMBAR_GL, 'asm volatile("membar.gl;" ::: "memory");'),
)


#: NVIDIA's inline PTX: a full-warp butterfly shuffle of 32 bits (every lane takes part: the group's control flow
#: is uniform), and ex2.approx.ftz (max 2 ulp relative error over its range, subnormal results flushed to zero)
_OPENCL_WARP_SHUFFLES = (
    WarpShuffle(
        WARP_SHFL_PTX,
        32,
        'asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"({out}) : "r"({x}), "r"({mask}));',
    ),
)
#: clang's builtins (PoCL compiles OpenCL C with clang): a non-temporal vector store (x86: vmovntps/vmovntdq),
#: ordered before the work-group's end by sfence; and the generic x86-64 tuning, which lets the vectorizer use the
#: 512-bit registers that the tuning of AVX-512 CPUs (Skylake to Sapphire Rapids) avoids for fear of down-clocking.
#: Measured on PoCL 3.1 (2 cores, 4096x4096 fp32 softmax): 14.1 -> 12.2 ms (stores), 11.0 (tuning), 8.8 (both).
_OPENCL_STREAMING_STORES = (
    StreamingStore(X86_NONTEMPORAL_STORE, "__builtin_nontemporal_store({value}, {ptr});", "__builtin_ia32_sfence();"),
)
_OPENCL_KERNEL_TUNINGS = ((X86_TUNE_WIDE, '__attribute__((target("tune=x86-64")))'),)
_OPENCL_APPROX_EXP2 = ((EXP2_PTX_APPROX, 'asm("ex2.approx.ftz.f32 %0, %1;" : "=f"({out}) : "f"({x}));'),)


@dataclass(frozen=True)
class OpenCLLanguage(CStyleLanguage):
    kernel_prefix: str = "__kernel "
    global_qual: str = "__global "
    local_qual: str = "__local "
    constant_qual: str = "__constant"
    barrier: str = "barrier(CLK_LOCAL_MEM_FENCE);"
    full_barrier: str = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
    global_fence: str = "mem_fence(CLK_GLOBAL_MEM_FENCE);"
    device_fences: tuple[tuple[str, str], ...] = _OPENCL_DEVICE_FENCES
    local_id: str = "(uint)get_local_id(0)"
    group_id: str = "(int)get_group_id({axis})"
    num_groups: str = "(int)get_num_groups({axis})"
    chunk_group_id: str = "(int)(get_group_id({axis}) + get_global_offset({axis}){per_group})"
    half_load: str = "vload_half(0, (const __global half *)({ptr}))"
    half_store: str = "vstore_half_rte({value}, 0, (__global half *)({ptr}))"
    unroll_pragma: str = "#pragma unroll"
    fixed_group_size: str = "__attribute__((reqd_work_group_size({size}, 1, 1)))"
    aligned: str = "__attribute__((aligned({n})))"
    forced_inline: str = "__attribute__((always_inline)) inline"
    fp64_pragma: str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"
    int64_atomics_pragma: str = (
        "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
        "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable"
    )
    fp_contract_off: str = "#pragma OPENCL FP_CONTRACT OFF"
    builtins: Mapping[str, str] = field(default_factory=lambda: dict(_OPENCL_BUILTINS), hash=False)
    clocks: tuple[DeviceClock, ...] = _OPENCL_CLOCKS
    warp_shuffles: tuple[WarpShuffle, ...] = _OPENCL_WARP_SHUFFLES
    approx_exp2s: tuple[tuple[str, str], ...] = _OPENCL_APPROX_EXP2
    streaming_stores: tuple[StreamingStore, ...] = _OPENCL_STREAMING_STORES
    kernel_tunings: tuple[tuple[str, str], ...] = _OPENCL_KERNEL_TUNINGS

    def bitcast(self, to: str, x: str) -> str:
        return f"as_{to}({x})"

    def convert(self, to: str, x: str, rounding: str | None = None) -> str:
        return super().convert(to, x) if rounding is None else f"convert_{to}_{rounding}({x})"

    def atomic(self, op: str, bits: int, ptr: str, *args: str) -> str:
        """32-bit: OpenCL 1.2's `atomic_*`; 64-bit: cl_khr_int64_*_atomics' `atom_*`."""
        return f"{'atom' if bits == 64 else 'atomic'}_{op}({', '.join((ptr, *args))})"

    def vector_type(self, ctype: str, n: int) -> str:
        return f"{ctype}{n}"

    def vector_literal(self, ctype: str, elems: list[str]) -> str:
        return f"({self.vector_type(ctype, len(elems))})({', '.join(elems)})"

    def vector_splat(self, ctype: str, n: int, x: str) -> str:
        return f"({self.vector_type(ctype, n)})({x})"

    def vector_load(self, n: int, ptr: str) -> str:
        return f"vload{n}(0, {ptr})"

    def vector_store(self, n: int, value: str, ptr: str) -> str:
        return f"vstore{n}({value}, 0, {ptr});"

    def array_alignment(self, nbytes: int) -> str:
        return f" __attribute__((aligned({nbytes})))"

    def aligned_vector_load(self, ctype: str, n: int, ptr: str) -> str:
        return f"*((const {self.vector_type(ctype, n)} *)({ptr}))"

    def aligned_vector_store(self, ctype: str, n: int, value: str, ptr: str) -> str:
        return f"*(({self.vector_type(ctype, n)} *)({ptr})) = {value};"

    def vector_elem(self, v: str, k: int) -> str:
        return f"{v}.s{k:x}"


OPENCL = OpenCLLanguage()
