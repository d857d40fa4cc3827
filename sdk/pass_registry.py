"""SDK IR passes by name, for `triton-sdk opt` (the command-line pass runner).

Every pass declared with `@ir_pass(name=...)`, or an `IRPass` subclass that sets `name`, registers here when its
module is imported: the SDK's own transforms, and a plugin's passes (its module is imported when the entry-point
plugins load). `all_passes()` imports both first. A name two different classes claim is kept for both and refused
as ambiguous when asked for, naming the modules.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from typing import Any

_PASSES: dict[str, list[type]] = {}


def register(cls: type) -> None:
    """Record pass class `cls` under its `name` (a class of the same module and qualified name replaces the old)."""
    same = (cls.__module__, cls.__qualname__)
    kept = [c for c in _PASSES.get(cls.name, []) if (c.__module__, c.__qualname__) != same]
    _PASSES[cls.name] = [*kept, cls]


def all_passes() -> dict[str, list[type]]:
    """Every registered pass by name, after importing the SDK's transforms and loading the entry-point plugins."""
    import importlib
    import pkgutil

    from . import custom_ops, plugins, transforms

    del custom_ops  # imported for its `sdk-custom-ops` pass
    for m in pkgutil.iter_modules(transforms.__path__):
        importlib.import_module(f"{transforms.__name__}.{m.name}")
    plugins.ensure_loaded()
    return {n: list(c) for n, c in sorted(_PASSES.items())}


def lookup(name: str) -> type:
    """The pass class registered as `name`; a ValueError naming close names, or the claimants of an ambiguous one."""
    passes = all_passes()
    found = passes.get(name)
    if not found:
        near = difflib.get_close_matches(name, list(passes), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else f"; registered: {', '.join(passes)}"
        raise ValueError(f"no SDK IR pass named {name!r}{hint}")
    if len(found) > 1:
        where = ", ".join(f"{c.__module__}.{c.__qualname__}" for c in found)
        raise ValueError(f"SDK IR pass name {name!r} is claimed by several classes: {where}")
    return found[0]


def options_of(cls: type) -> list[dataclasses.Field]:
    """The option fields of a pass class (its own dataclass fields, or a function pass's options dataclass)."""
    opts = getattr(cls, "options_class", None) or cls
    return list(dataclasses.fields(opts)) if dataclasses.is_dataclass(opts) else []


def build(cls: type, settings: dict[str, str]) -> Any:
    """An instance of pass `cls` with options given as text (`factor=3`), each converted to the option's type."""
    fields = {f.name: f for f in options_of(cls)}
    unknown = sorted(set(settings) - set(fields))
    if unknown:
        have = ", ".join(f"{f.name}: {_type_name(f.type)}" for f in fields.values()) or "none"
        raise ValueError(f"pass {cls.name!r} has no option {', '.join(unknown)} (its options: {have})")
    opts = getattr(cls, "options_class", None) or cls
    hints = typing.get_type_hints(opts)
    values = {k: _convert(cls.name, k, v, hints.get(k, str)) for k, v in settings.items()}
    return cls(**values)


def _convert(pass_name: str, option: str, text: str, hint: Any) -> Any:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        if text.lower() == "none":
            return None
        hint = next(a for a in args if a is not type(None))
    try:
        if hint is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        if hint in (int, float, str):
            return hint(text)
    except ValueError:
        raise ValueError(f"pass {pass_name!r}: option {option}={text!r} is not a {_type_name(hint)}") from None
    raise ValueError(f"pass {pass_name!r}: option {option} ({_type_name(hint)}) cannot be set from the command line")


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint)
