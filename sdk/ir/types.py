"""Types of the SDK IR: a faithful, frozen mirror of the MLIR types that appear in TTIR.

MLIR integers are signless (`i32` is neither signed nor unsigned; the op decides), so `IntType` carries only a width.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Type:
    """Base of all IR types; subclasses are frozen dataclasses, so types compare and hash by value."""

    @property
    def element(self) -> Type:
        """The scalar element type: the type itself for scalars, the element type for tensors."""
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def is_tensor(self) -> bool:
        return False

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class IntType(Type):
    """`iN`. `signedness` is "" (signless, what TTIR ops use) or "s"/"u" for `siN`/`uiN`, which TTIR only prints
    inside tensor-descriptor types (`!tt.tensordesc<32x32xui32>`)."""

    width: int
    signedness: str = ""

    def __str__(self) -> str:
        return f"{self.signedness}i{self.width}"


class FloatKind(enum.Enum):
    """Float formats by their MLIR spelling."""

    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    TF32 = "tf32"
    F8E4M3FN = "f8E4M3FN"
    F8E5M2 = "f8E5M2"
    F8E4M3FNUZ = "f8E4M3FNUZ"
    F8E5M2FNUZ = "f8E5M2FNUZ"
    F8E4M3B11FNUZ = "f8E4M3B11FNUZ"


_FLOAT_WIDTH = {
    FloatKind.F16: 16,
    FloatKind.BF16: 16,
    FloatKind.F32: 32,
    FloatKind.F64: 64,
    FloatKind.TF32: 32,
    FloatKind.F8E4M3FN: 8,
    FloatKind.F8E5M2: 8,
    FloatKind.F8E4M3FNUZ: 8,
    FloatKind.F8E5M2FNUZ: 8,
    FloatKind.F8E4M3B11FNUZ: 8,
}


@dataclass(frozen=True)
class FloatType(Type):
    kind: FloatKind

    @property
    def width(self) -> int:
        return _FLOAT_WIDTH[self.kind]

    def __str__(self) -> str:
        return self.kind.value


@dataclass(frozen=True)
class IndexType(Type):
    def __str__(self) -> str:
        return "index"


@dataclass(frozen=True)
class NoneType(Type):
    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True)
class PointerType(Type):
    """`!tt.ptr<T>`; address space 1 (global) is Triton's default and is not printed. A `tl.const` pointer's space
    is the string "constant" (global memory the kernel may not store to)."""

    pointee: Type
    address_space: int | str = 1

    def __str__(self) -> str:
        if self.address_space == 1:
            return f"!tt.ptr<{self.pointee}>"
        if isinstance(self.address_space, str):
            return f'!tt.ptr<{self.pointee}, "{self.address_space}">'
        return f"!tt.ptr<{self.pointee}, {self.address_space}>"


@dataclass(frozen=True)
class TensorType(Type):
    dims: tuple[int, ...]
    elem: Type

    @property
    def element(self) -> Type:
        return self.elem

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims

    @property
    def is_tensor(self) -> bool:
        return True

    def with_element(self, elem: Type) -> TensorType:
        return TensorType(self.dims, elem)

    def __str__(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.dims) + f"{self.elem}>"


@dataclass(frozen=True)
class TensorDescType(Type):
    """`!tt.tensordesc<32x32xf32>` (3.9 spelling; 3.7 wraps the block in `tensor<...>`)."""

    block: TensorType

    def __str__(self) -> str:
        return "!tt.tensordesc<" + "".join(f"{d}x" for d in self.block.dims) + f"{self.block.elem}>"


@dataclass(frozen=True)
class OpaqueType(Type):
    """A type the SDK does not model (e.g. `!ttg.memdesc<...>`, `vector<4xf32>`), kept verbatim so unknown ops can
    still be read and printed back."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class FunctionType(Type):
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            return f"({ins}) -> {self.results[0]}"
        return f"({ins}) -> (" + ", ".join(map(str, self.results)) + ")"


i1 = IntType(1)
i8 = IntType(8)
i16 = IntType(16)
i32 = IntType(32)
i64 = IntType(64)
f16 = FloatType(FloatKind.F16)
bf16 = FloatType(FloatKind.BF16)
f32 = FloatType(FloatKind.F32)
f64 = FloatType(FloatKind.F64)
index = IndexType()


def is_int(t: Type) -> bool:
    return isinstance(t.element, (IntType, IndexType))


def is_float(t: Type) -> bool:
    return isinstance(t.element, FloatType)


def is_ptr(t: Type) -> bool:
    return isinstance(t.element, PointerType)


def like(t: Type, elem: Type) -> Type:
    """`elem` shaped like `t` (the i1 results of comparisons, a load's result, masks)."""
    return TensorType(t.dims, elem) if isinstance(t, TensorType) else elem


def pointee(t: Type) -> Type:
    """The value type loaded through pointer (or pointer tensor) `t`."""
    if isinstance(t, TensorType) and isinstance(t.elem, PointerType):
        return TensorType(t.dims, t.elem.pointee)
    return t.pointee if isinstance(t, PointerType) else t
