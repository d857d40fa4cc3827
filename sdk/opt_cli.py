"""`triton-sdk opt`: run named SDK IR passes over a `.ttir`/`.sdkir` file and print the result, as `triton-opt`
does for Triton's passes. Passes come from the registry (sdk/pass_registry.py): the SDK's own and every plugin's."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    o = sub.add_parser(
        "opt",
        help="run named SDK IR passes (the SDK's and plugins') over a .ttir/.sdkir file and print the IR",
        description="Read a .ttir or .sdkir file with the SDK's reader, run each -p pass in order (verifying the IR "
        "after each), print the result. `--list` names every registered pass with its options.",
    )
    o.add_argument("file", nargs="?", help="TTIR or SDK IR text")
    o.add_argument(
        "-p",
        "--pass",
        dest="passes",
        action="append",
        default=[],
        metavar="NAME[:OPT=V,...]",
        help="a pass to run, with options (repeatable; runs in the order given)",
    )
    o.add_argument("--backend", default="cpu_ref", help="the SDK backend whose target and options passes see")
    o.add_argument("-o", "--output", default=None, help="write the IR here instead of stdout")
    o.add_argument("--list", action="store_true", help="list the registered passes and their options")
    return o


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """`name:opt=v,opt2=w` -> (name, {opt: v, opt2: w})."""
    name, _, rest = spec.partition(":")
    settings: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"pass option {item!r} in {spec!r} is not OPT=VALUE")
        settings[key.strip()] = value.strip()
    return name.strip(), settings


def run(args: argparse.Namespace, usage_error: type[Exception], backend_of: Any) -> int:
    from . import pass_registry

    if args.list:
        for name, classes in pass_registry.all_passes().items():
            for cls in classes:
                doc = " ".join((cls.__doc__ or "").split()).split(". ")
                opts = ", ".join(f"{f.name}={f.default!r}" for f in pass_registry.options_of(cls) if _has_default(f))
                print(f"{name:28s} {cls.__module__}  {doc[0] if doc else ''}")
                if opts:
                    print(f"{'':28s} options: {opts}")
        return 0
    if not args.file:
        raise usage_error("give a .ttir/.sdkir file (or --list)")
    if not args.passes:
        raise usage_error("give at least one pass with -p NAME (triton-sdk opt --list names them)")
    try:
        instances = [pass_registry.build(pass_registry.lookup(n), s) for n, s in map(parse_spec, args.passes)]
    except (ValueError, TypeError) as e:
        raise usage_error(str(e)) from None
    from .ir import parse_ttir, print_module, verify
    from .ir.core import IRVerificationError
    from .pipeline import PassContext

    try:
        with open(args.file) as f:
            text = f.read()
    except UnicodeDecodeError:
        raise usage_error(f"{args.file} is not a text file (expected TTIR or SDK IR)") from None
    module = parse_ttir(text)
    verify(module)
    cls = backend_of(args.backend, sdk=True).compiler
    backend = cls(cls.describe(None).gpu_target())
    ctx = PassContext(options=backend.parse_options({}), target=backend.descriptor, metadata={})
    for p in instances:
        p.run(module, ctx)
        try:
            verify(module)
        except IRVerificationError as e:
            print(f"triton-sdk opt: pass {p.name!r} produced invalid IR: {e}", file=sys.stderr)
            return 1
    out = print_module(module)
    if args.output:
        with open(args.output, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)
    return 0


def _has_default(f: Any) -> bool:
    import dataclasses

    return f.default is not dataclasses.MISSING
