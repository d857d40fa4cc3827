"""The launch contract: Triton's kernel signature → a typed argument descriptor for the static native launcher.

Compiled kernels export `void entry(void **args, int32 gx, int32 gy, int32 gz, int64 start, int64 end)`; `args[i]`
points to the i-th runtime argument. The native launcher (`triton_backend_sdk._native.Launcher`) packs Python
arguments by the kinds computed here and runs programs [start, end) on its thread pool.
"""

from __future__ import annotations

from typing import Any

from .errors import UnsupportedError

# Kind codes; they must match csrc/launcher.cpp (checked against _native.kinds in the tests).
KIND_SKIP, KIND_PTR, KIND_I1, KIND_I8, KIND_I16, KIND_I32, KIND_I64 = 0, 1, 2, 3, 4, 5, 6
KIND_U8, KIND_U16, KIND_U32, KIND_U64, KIND_FP16, KIND_BF16, KIND_FP32, KIND_FP64 = 7, 8, 9, 10, 11, 12, 13, 14

_SCALAR_KINDS = {
    "i1": KIND_I1,
    "u1": KIND_I1,
    "i8": KIND_I8,
    "i16": KIND_I16,
    "i32": KIND_I32,
    "i64": KIND_I64,
    "u8": KIND_U8,
    "u16": KIND_U16,
    "u32": KIND_U32,
    "u64": KIND_U64,
    "fp16": KIND_FP16,
    "bf16": KIND_BF16,
    "fp32": KIND_FP32,
    "f32": KIND_FP32,
    "fp64": KIND_FP64,
}

_CPP = {
    "i1": "int8_t",
    "u1": "int8_t",
    "i8": "int8_t",
    "i16": "int16_t",
    "i32": "int32_t",
    "i64": "int64_t",
    "u8": "uint8_t",
    "u16": "uint16_t",
    "u32": "uint32_t",
    "u64": "uint64_t",
    "fp16": "uint16_t",
    "bf16": "uint16_t",
    "fp32": "float",
    "f32": "float",
    "fp64": "double",
}


def arg_kind(ty: str, backend: str = "sdk") -> int:
    """The launcher kind of one Triton signature entry (`*fp32`, `i32`, `constexpr`, ...)."""
    if ty == "constexpr":
        return KIND_SKIP
    if ty.startswith("*"):
        return KIND_PTR
    kind = _SCALAR_KINDS.get(ty)
    if kind is None:
        raise UnsupportedError(backend, f"kernel argument type {ty!r} cannot be passed to this backend's launcher")
    return kind


def cpp_type(ty: str) -> str:
    if ty.startswith("*"):
        return "void*"
    return _CPP.get(ty, "void*")


def signature_of(src: Any) -> tuple[list[str], list[str]]:
    """(names, Triton type strings) of every kernel parameter, constexprs included, in call order."""
    sig = dict(src.signature)
    constants = getattr(src, "constants", {}) or {}
    fn = getattr(src, "fn", None)
    arg_names = list(getattr(fn, "arg_names", [])) if fn is not None else []
    names: list[str] = []
    types: list[str] = []
    for i, (key, ty) in enumerate(sig.items()):
        name = (
            key
            if isinstance(key, str)
            else (arg_names[key] if isinstance(key, int) and key < len(arg_names) else f"arg{i}")
        )
        if isinstance(ty, tuple):
            raise UnsupportedError("sdk", f"tuple kernel argument {name!r} (flatten it into separate arguments)")
        if (i,) in constants or name in constants:
            ty = "constexpr"
        names.append(name)
        types.append(ty)
    return names, types


def expand_descriptors(names: list[str], types: list[str]) -> tuple[list[str], list[str], set[int]]:
    """(names, types) with every host `TensorDescriptor` parameter expanded as Triton's TTIR pass
    `rewrite_tensor_descriptor_to_pointer` expands it (base, shape, strides, flags...), and the positions of the
    descriptors among the original parameters (for `flatten_descriptors`)."""
    from triton.backends.driver import expand_signature

    out_names: list[str] = []
    out_types: list[str] = []
    positions: set[int] = set()
    for i, (name, ty) in enumerate(zip(names, types)):
        if isinstance(ty, str) and ty.startswith("tensordesc"):
            parts = expand_signature([ty], None, "")
            positions.add(i)
            out_names += [f"{name}.{k}" for k in range(len(parts))]
            out_types += parts
        else:
            out_names.append(name)
            out_types.append(ty)
    return out_names, out_types, positions


def flatten_descriptors(args: tuple, positions: set[int]) -> tuple:
    """Call arguments with each host `TensorDescriptor` at `positions` decomposed into its expanded parameters."""
    from triton.backends.driver import decompose_descriptor

    flat: list[Any] = []
    for i, a in enumerate(args):
        flat.extend(decompose_descriptor(a) if i in positions else [a])
    return tuple(flat)


def make_native_launcher(src: Any, metadata: Any, backend: str) -> Any:
    from . import _native

    names, types = signature_of(src)
    kinds = [arg_kind(t, backend) for t in types]
    return _native.Launcher(kinds, names, backend=backend)
