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


def _element_type(ty: str) -> str | None:
    """The canonical element type of a pointer signature entry (`*fp32`, `*kbf16` -> 'fp32', 'bf16'), else None."""
    from triton._utils import type_canonicalisation_dict

    if not ty.startswith("*"):
        return None
    return type_canonicalisation_dict.get(ty[2:] if ty.startswith("*k") else ty[1:])


def _dtype_element_type(dtype: Any) -> str | None:
    """The canonical element type of a torch dtype or a Triton dtype (a `triton.reinterpret` view), else None."""
    from triton._utils import type_canonicalisation_dict

    return type_canonicalisation_dict.get(str(dtype).split(".")[-1])


#: the torch dtypes Triton's JIT maps tensors of to pointer types (torch.bool, not torch 2.13's torch.int1, is `u1`)
_TORCH_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)


def pointer_contract(types: list[str]) -> tuple[list[Any], Any]:
    """(expected torch dtype per parameter or None, check(i, arg)) for `Launcher.set_pointer_contract`.

    A tensor passed for a `*T` parameter must hold T elements: a kernel compiled ahead of time for `*fp32` and given
    an fp16 tensor would read garbage and past the buffer's end. Triton's JIT never gets here with a mismatch (it
    specializes on the tensor's dtype); AOT launches (`triton.compile(...)[grid](...)`) do."""
    try:
        import torch
    except ImportError:
        return [None] * len(types), None
    dtypes = [getattr(torch, n, None) for n in _TORCH_DTYPES]
    by_name = {_dtype_element_type(d): d for d in dtypes if d is not None}
    elements = [_element_type(t) for t in types]
    expected = [by_name.get(e) if e else None for e in elements]

    def check(i: int, arg: Any) -> str | None:
        got = _dtype_element_type(arg.dtype)
        if got is None or got == elements[i]:
            return None
        want = expected[i] or elements[i]
        return (
            f"expected a {want} tensor (the kernel was compiled for {types[i]}), got {arg.dtype}; pass a {want} "
            f"tensor or a triton.reinterpret view, or compile the kernel for *{got}"
        )

    return expected, check


def make_native_launcher(names: list[str], types: list[str], backend: str, hidden: tuple[str, ...] = ()) -> Any:
    """The native launcher for these parameters (Triton types, constexprs as 'constexpr') plus the `hidden` trailing
    pointer parameters the backend passes itself; it checks and converts every argument (`Launcher.pack` does only
    that), the contract every SDK backend launches under."""
    from . import _native

    kinds = [arg_kind(t, backend) for t in types] + [KIND_PTR] * len(hidden)
    launcher = _native.Launcher(kinds, [*names, *hidden], backend=backend)
    expected, check = pointer_contract(types)
    if check is not None and any(e is not None for e in expected):
        launcher.set_pointer_contract([*expected, *[None] * len(hidden)], check)
    return launcher
