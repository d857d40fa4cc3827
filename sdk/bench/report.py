"""Writing a benchmark run: bench.json (everything), bench.md (a table per backend under a host, version and
roofline header) and bench.png (each case's ratio to each peer, one panel per backend)."""

from __future__ import annotations

import json
import os
from typing import Any

#: a row of a ratio chart: (label, {peer: ratio or None})
ChartRow = tuple[str, dict[str, float | None]]

#: bar order (and color) of the peers; the H200 rendering's two come last
PEER_ORDER = ("torch", "torch.compile", "inductor_cpp", "numpy", "interpreter", "triton-cuda", "torch-cuda")
#: legend text where the peer's name alone would mislead
LEGEND = {
    "interpreter": "Triton interpreter\n(at its smaller size)",
    "numpy": "numpy (OpenBLAS)",
    "inductor_cpp": "torch.compile, Inductor's C++ backend\n(the Inductor cases' peer)",
    "triton-cuda": "Triton's CUDA backend",
    "torch-cuda": "torch on CUDA",
}


def require_matplotlib() -> None:
    """Raise ImportError with the install command when matplotlib (the chart) is missing; checked before a run."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            "matplotlib is needed for bench.png: pip install matplotlib (or pip install -e '.[dev]')"
        ) from None


def _num(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}g}" if abs(v) < 10**digits else f"{v:.0f}"


def _mib(n: int | None) -> str:
    return "?" if not n else f"{n / (1 << 20):.0f} MiB"


def _pair(measured: list[float] | None) -> str:
    return "before/after " + "/".join(f"{v:.0f}" for v in measured) if measured else "measured once"


def header(report: dict[str, Any]) -> list[str]:
    h, v, roof = report["host"], report["versions"], report["roofline"]
    cpu = h["cpu"]
    fam = f" (family {cpu['family']} model {cpu['model']})" if "family" in cpu else ""
    triad, sgemm = roof["triad"], roof["sgemm"]
    numpy = f", numpy/OpenBLAS {_num(sgemm.get('numpy_gflops'))}" if "numpy_gflops" in sgemm else ""
    core = h.get("openblas_core") or "?"
    env = ", ".join(f"{k}={val}" for k, val in h.get("openblas_env", {}).items()) or "none set"
    launcher = h.get("sdk_launcher_threads", "?")
    return [
        f"Measured {report['date']} ({report['mode']} run, {report['seconds']:.0f} s).",
        "",
        (
            f"- Host: {cpu['model_name']}{fam}, {h['cores']} cores ({h['cores_usable']} usable), last-level cache "
            f"{_mib(h['llc_bytes'])}; threads: torch {h['threads']}, SDK launcher pool {launcher}; OpenBLAS core "
            f"{core} (numpy timed in a child without OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE; this host's: {env})."
        ),
        (
            "- Versions: "
            + ", ".join(f"{k} {val}" for k, val in v.items())
            + f"; torch.compile: Inductor cpu_backend={report.get('inductor_cpu_backend')}."
        ),
        (
            f"- Roofline (same run): triad a = b + s*c {triad['gbps']:.1f} GB/s (3 arrays of "
            f"{_mib(triad['array_bytes'])}, best of {triad['repeats']}, {triad['threads']} threads; "
            f"{_pair(triad.get('measured'))}); sgemm {sgemm['gflops']:.0f} GFLOP/s at {sgemm['size']}^3 "
            f"({sgemm['source']}; torch.mm {_num(sgemm['torch_mm_gflops'])}{numpy}; {_pair(sgemm.get('measured'))}). "
            "Each ceiling is the higher of a measurement before the cases and one after them."
        ),
        "",
        (
            "Ratios are peer time / our time (> 1: ours is faster), medians of interleaved rounds; the "
            "interpreter's at its own smaller size (ours timed at that size too). Roofline: GB/s (inputs read + "
            "outputs written) over the triad, or GFLOP/s over the sgemm. Spread: slowest round / fastest of ours. "
            "The machine is shared: compare ratios, not times, and rerun before concluding."
        ),
    ]


def _peer_cell(peer: dict[str, Any] | None) -> str:
    if peer is None:
        return "-"
    if "error" in peer:
        return "error"
    cell = f"{_num(peer['ratio'])}x"
    return f"{cell} ({peer['size_label']})" if "size_label" in peer else cell


def ordered_peers(names: set[str]) -> list[str]:
    """Peers in PEER_ORDER's order, any other after them by name (a case may bring its own peer)."""
    return [p for p in PEER_ORDER if p in names] + sorted(names - set(PEER_ORDER))


def table(results: list[dict[str, Any]]) -> list[str]:
    peers = ordered_peers({p for r in results for p in r.get("peers", {})})
    cols = ["case", "size", "ours ms", "spread", "rate", "roofline", *peers, "check (max abs err)"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        if "error" in r:
            cells = [
                r["case"],
                r.get("size_label", "-"),
                "ERROR",
                "",
                "",
                "",
                *[""] * len(peers),
                r["error"].replace("|", "/"),
            ]
        else:
            check = r["check"]
            frac = r.get("roofline_fraction")
            cells = [
                r["case"],
                r["size_label"],
                _num(r["ours"]["median_ms"]),
                f"{r['ours']['spread']:.2f}",
                f"{_num(r['rate'])} {r['metric']}",
                "-" if frac is None else f"{frac:.0%}",
                *[_peer_cell(r["peers"].get(p)) for p in peers],
                f"{'ok' if check['ok'] else 'WRONG'} ({check['max_abs_err']:.1e})",
            ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def markdown(report: dict[str, Any]) -> str:
    lines = ["# triton-sdk bench", "", *header(report)]
    by_backend: dict[str, list[dict[str, Any]]] = {}
    for r in report["results"]:
        by_backend.setdefault(r["backend"], []).append(r)
    for backend, results in by_backend.items():
        lines += ["", f"## {backend}", "", *table(results)]
        notes = [f"- {r['case']}: {w}" for r in results for w in r.get("warnings", [])]
        notes += [
            f"- {r['case']}: peer {n} error: {p['error']}"
            for r in results
            for n, p in r["peers"].items()
            if "error" in p
        ]
        if notes:
            lines += ["", "Warnings:", "", *notes]
    return "\n".join(lines) + "\n"


def chart_rows(results: list[dict[str, Any]]) -> list[ChartRow]:
    return [
        (f"{r['case']}\n{r.get('size_label', '')}", {n: p.get("ratio") for n, p in r.get("peers", {}).items()})
        for r in results
    ]


def _times(v: float) -> str:
    return f"{v:.0f}x" if v >= 10 else f"{v:.2g}x"


def plot(path: str, panels: list[tuple[str, list[ChartRow]]], title: str) -> None:
    """Horizontal bars of ratios on a log axis, a line at 1.0, one panel per (title, rows); each row's bars are the
    peers it has, in a fixed order and color."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    names = {p for _, rows in panels for _, ratios in rows for p, v in ratios.items() if v}
    peers = ordered_peers(names)
    color = {p: plt.get_cmap("tab10")(i) for i, p in enumerate(peers)}
    bar = 0.24
    heights = [sum(max(1, sum(1 for v in r.values() if v)) * bar + 0.35 for _, r in rows) for _, rows in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(10, 1.3 + sum(h + 1.0 for h in heights)),
        squeeze=False,
        gridspec_kw={"height_ratios": [h + 0.4 for h in heights]},
    )
    for ax, (panel_title, rows) in zip(axes[:, 0], panels):
        ticks, y, seen = [], 0.0, set()
        for _, ratios in rows:
            present = [(p, ratios[p]) for p in peers if ratios.get(p)]
            ticks.append(y + bar * (max(1, len(present)) - 1) / 2)
            for peer, v in present:
                label = None if peer in seen else LEGEND.get(peer, peer)
                ax.barh(y, v, height=bar * 0.85, color=color[peer], label=label)
                ax.annotate(_times(v), (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
                seen.add(peer)
                y += bar
            y += 0.35 + (0 if present else bar)
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_xscale("log")
        ax.set_yticks(ticks, [label for label, _ in rows], fontsize=9)
        ax.set_ylim(y - 0.2, -0.3)
        ax.set_title(panel_title, fontsize=11, loc="left")
        ax.set_xlabel("peer time / our time (> 1: ours faster; log scale)")
        ax.grid(axis="x", which="both", alpha=0.3)
        lo, hi = ax.get_xlim()
        ax.set_xlim(min(lo, 0.5), max(hi, 1.5) * 1.5)  # room for the value labels
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        lo, hi = ax.get_xlim()
        if hi / lo < 100:  # under two decades there is room to label 2x and 5x ticks as well
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
        else:
            ax.xaxis.set_minor_formatter(NullFormatter())
        handles, labels = ax.get_legend_handles_labels()
        named = {LEGEND.get(p, p): i for i, p in enumerate(peers)}
        order = sorted(range(len(labels)), key=lambda i: named[labels[i]])
        ax.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(report: dict[str, Any], out_dir: str) -> list[str]:
    """bench.json, bench.md and bench.png in `out_dir`; their paths."""
    paths = [os.path.join(out_dir, f"bench.{ext}") for ext in ("json", "md", "png")]
    with open(paths[0], "w") as f:
        json.dump(report, f, indent=1)
    with open(paths[1], "w") as f:
        f.write(markdown(report))
    by_backend: dict[str, list[dict[str, Any]]] = {}
    for r in report["results"]:
        by_backend.setdefault(r["backend"], []).append(r)
    cpu = report["host"]["cpu"]["model_name"]
    panels = [(f"{b} ({cpu}, {report['host']['threads']} threads)", chart_rows(rs)) for b, rs in by_backend.items()]
    plot(paths[2], panels, f"triton-sdk bench, {report['mode']} run, {report['date']}")
    return paths
