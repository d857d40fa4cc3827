"""The `tt` dialect's memory ops (pointers, loads, stores, atomics, tensor descriptors), each one declared class."""

from __future__ import annotations

import re
from typing import Any

from ..attrs import Attribute, OpaqueAttr
from ..core import IRVerificationError, Op, Value, register_op
from ..enums import (
    CacheModifier,
    EvictionPolicy,
    MemSemantic,
    MemSyncScope,
    PaddingOption,
    RMWOp,
)
from ..fields import (
    AnyProp,
    BoolProp,
    EnumProp,
    KeywordProp,
    Operand,
    OptOperand,
    Result,
    VarOperand,
)
from ..types import PointerType, TensorDescType, Type, i1, is_int, pointee
from .arith import BinaryOp

# ---------------------------------------------------------------------------------------------------------------------
# Memory


@register_op
class AddPtr(BinaryOp):
    """`tt.addptr ptr, offset`: pointer plus offset counted in pointee elements."""

    name = "tt.addptr"
    fastmath = None  # type: ignore[assignment]
    assembly_format = "$lhs, $rhs attr-dict : type($result), type($rhs)"

    @property
    def ptr(self) -> Value:
        return self.lhs

    @property
    def offset(self) -> Value:
        return self.rhs

    def verify_(self) -> None:
        if not is_int(self.offset.type):
            raise IRVerificationError(f"needs an integer offset, not {self.offset.type}", self)
        if self.result.type != self.ptr.type or self.offset.type.shape != self.ptr.type.shape:
            raise IRVerificationError(f"adds {self.offset.type} to {self.ptr.type} giving {self.result.type}", self)


class _CacheHints(Op):
    """Cache modifier and eviction policy of a load/store, from either spelling: 3.7 keeps them as `cache`/`evict`
    EnumAttrs, 3.9 as one `#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>` OpaqueAttr."""

    cache = EnumProp(CacheModifier, default=CacheModifier.NONE)
    evict = EnumProp(EvictionPolicy, default=EvictionPolicy.NORMAL)
    cache_policy = AnyProp("cachePolicy")

    def _policy(self, key: str) -> str | None:
        policy = self.cache_policy
        if isinstance(policy, OpaqueAttr):
            return dict(re.findall(r"(\w+)\s*=\s*(\w+)", policy.text)).get(key)
        return None

    @property
    def cache_modifier(self) -> CacheModifier:
        v = self._policy("cache_modifier")
        return CacheModifier(v) if v else self.cache

    @property
    def eviction_policy(self) -> EvictionPolicy:
        v = self._policy("eviction_policy")
        return EvictionPolicy(v) if v else self.evict


_HINTS = "(cacheModifier = $cache)? (evictionPolicy = $evict)? attr-dict"


@register_op
class Load(_CacheHints):
    """`tt.load ptr[, mask[, other]]`."""

    name = "tt.load"
    ptr = Operand()
    mask = OptOperand()
    other = OptOperand()
    result = Result()
    is_volatile = BoolProp("isVolatile")
    padding = EnumProp(PaddingOption)
    assembly_format = f"$ptr (, $mask)? (, $other)? {_HINTS} : type($ptr)"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return [pointee(types["ptr"][0])]

    def verify_(self) -> None:
        if self.result.type != pointee(self.ptr.type):
            raise IRVerificationError(f"loads {self.result.type} through {self.ptr.type}", self)


@register_op
class Store(_CacheHints):
    name = "tt.store"
    ptr = Operand()
    value = Operand()
    mask = OptOperand()
    assembly_format = f"$ptr, $value (, $mask)? {_HINTS} : type($ptr)"

    def verify_(self) -> None:
        if self.value.type != pointee(self.ptr.type):
            raise IRVerificationError(f"stores {self.value.type} through {self.ptr.type}", self)


class _Atomic(Op):
    sem = EnumProp(MemSemantic, default=MemSemantic.ACQUIRE_RELEASE)
    scope = EnumProp(MemSyncScope, default=MemSyncScope.GPU)


@register_op
class AtomicRMW(_Atomic):
    """`tt.atomic_rmw op, sem, scope, ptr, val[, mask]`."""

    name = "tt.atomic_rmw"
    rmw_op = EnumProp(RMWOp, "atomic_rmw_op", required=True)
    ptr = Operand()
    val = Operand()
    mask = OptOperand()
    result = Result()
    assembly_format = "$rmw_op, $sem, $scope, $ptr, $val (, $mask)? attr-dict : functional-type"


@register_op
class AtomicCAS(_Atomic):
    """`tt.atomic_cas sem, scope, ptr, cmp, val`."""

    name = "tt.atomic_cas"
    ptr = Operand()
    cmp = Operand()
    val = Operand()
    result = Result()
    assembly_format = "$sem, $scope, $ptr, $cmp, $val attr-dict : functional-type"


@register_op
class AtomicLoad(_Atomic):
    """`tt.atomic_load sem, scope, ptr[, mask]` (Triton 3.9)."""

    name = "tt.atomic_load"
    sem = EnumProp(MemSemantic, default=MemSemantic.ACQUIRE)
    ptr = Operand()
    mask = OptOperand()
    result = Result()
    assembly_format = "$sem, $scope, $ptr (, $mask)? attr-dict : functional-type"


@register_op
class AtomicStore(_Atomic):
    """`tt.atomic_store sem, scope, ptr, value[, mask]` (Triton 3.9)."""

    name = "tt.atomic_store"
    sem = EnumProp(MemSemantic, default=MemSemantic.RELEASE)
    ptr = Operand()
    value = Operand()
    mask = OptOperand()
    assembly_format = "$sem, $scope, $ptr, $value (, $mask)? attr-dict : type($ptr)"


@register_op
class AtomicPoll(_Atomic):
    """`tt.atomic_poll sem, scope, ptr, expected[ timeout t]` -> i1 per element (Triton 3.9, `tl.atomic_poll`).

    Spins until the integer (16/32/64-bit) at each pointer equals `expected`, or until `timeout` (a scalar i64,
    Triton's uint64 nanoseconds, shared by the whole block) has passed; a timed-out element is false. Every element
    is read at least once, even with a zero timeout. `sem` is acquire or relaxed. No mask: every pointer is polled.
    `sdk/transforms/atomic_poll.py` expands it into a loop of `tt.atomic_load`s for backends without a rule of their
    own. A poll that waits for another program needs that program to run: cpu_ref runs programs on a thread pool
    that claims them in increasing linear id (one thread: strictly in order), so a program may wait only for a
    lower-numbered one."""

    name = "tt.atomic_poll"
    sem = EnumProp(MemSemantic, default=MemSemantic.ACQUIRE)
    ptr = Operand()
    expected = Operand()
    timeout = OptOperand()
    result = Result()
    assembly_format = (
        "$sem, $scope, $ptr, $expected (timeout $timeout)? attr-dict : type($ptr), type($expected) -> type($result)"
    )

    def verify_(self) -> None:
        if self.sem not in (MemSemantic.ACQUIRE, MemSemantic.RELAXED):
            raise IRVerificationError(f"polls with {self.sem.value} semantics (acquire or relaxed only)", self)
        if self.expected.type != pointee(self.ptr.type) or not is_int(self.expected.type):
            raise IRVerificationError(f"expects {self.expected.type} through {self.ptr.type}", self)
        if self.result.type.shape != self.ptr.type.shape or self.result.type.element != i1:
            raise IRVerificationError(f"gives {self.result.type} for {self.ptr.type} (i1 per pointer)", self)
        t = self.timeout
        if t is not None and (t.type.is_tensor or not is_int(t.type)):
            raise IRVerificationError(f"times out after a {t.type} (a scalar integer of nanoseconds)", self)


@register_op
class MakeTensorDescriptor(Op):
    """`tt.make_tensor_descriptor base, [shape...], [strides...] : <f32>, <32x32xf32>` (the format elides the
    `!tt.ptr`/`!tt.tensordesc` of its types)."""

    name = "tt.make_tensor_descriptor"
    base = Operand()
    shape = VarOperand()
    strides = VarOperand()
    result = Result()
    padding = EnumProp(PaddingOption)
    assembly_format = "$base, [$shape], [$strides] attr-dict : custom<types>"

    @classmethod
    def parse_types(cls, p: Any, st: Any) -> None:
        st.types["base"] = [p.ptr_body() if p.at("<") else p.type()]
        p.expect(",")
        st.types["result"] = [p.tensordesc_body() if p.at("<") else p.type()]

    def print_types(self, w: Any) -> str:
        def short(t: Type) -> str:
            s = str(t)
            return s[s.index("<") :] if isinstance(t, (PointerType, TensorDescType)) else s

        return f"{short(self.base.type)}, {short(self.result.type)}"


@register_op
class DescriptorLoad(Op):
    """`tt.descriptor_load desc[indices...]`."""

    name = "tt.descriptor_load"
    desc = Operand()
    indices = VarOperand()
    result = Result()
    assembly_format = "$desc[$indices] attr-dict : type($desc) -> type($result)"


@register_op
class DescriptorStore(Op):
    """`tt.descriptor_store desc[indices...], src`: MLIR's operand order is (desc, src, *indices), not the text's."""

    name = "tt.descriptor_store"
    desc = Operand()
    src = Operand()
    indices = VarOperand()
    assembly_format = "$desc[$indices], $src attr-dict : type($desc), type($src)"


@register_op
class DescriptorReduce(DescriptorStore):
    """`tt.descriptor_reduce kind, desc[indices...], src`; `kind` is a keyword (add, min, max, inc, dec, and, or,
    xor) kept as an OpaqueAttr."""

    name = "tt.descriptor_reduce"
    kind = KeywordProp(opaque=True, required=True)
    assembly_format = "$kind, $desc[$indices], $src attr-dict : type($desc), type($src)"
