"""The benchmark's tables (Markdown), its JSON and its chart, from the results bench.py collects."""
import json
import math

PEER_ORDER = ["xgboost", "tl2cgen", "onnxruntime", "lightgbm", "lleaves", "catboost", "daal4py"]
COLORS = {"xgboost": "#1f77b4", "tl2cgen": "#ff7f0e", "onnxruntime": "#2ca02c", "lightgbm": "#9467bd",
          "lleaves": "#8c564b", "catboost": "#e377c2", "daal4py": "#17becf"}


def peers_of(results):
    present = {n for r in results for n in r["us_per_row"]}
    return [p for p in PEER_ORDER if p in present]


def ratio(r, peer, grove="grove"):
    """peer's median time over grove's for one result (above 1: grove is faster), or None."""
    u = r["us_per_row"]
    if peer not in u or grove not in u:
        return None
    return u[peer]["median"] / u[grove]["median"]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x):
    """A number with 3-4 significant digits."""
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def geomeans(results, peer, grove="grove"):
    """{"large": ..., "small": ..., "cells": ..., "lowest": (ratio, model, batch)} for batches >= 512 and <= 64."""
    cells = [(ratio(r, peer, grove), r["model"], r["batch"]) for r in results]
    cells = [c for c in cells if c[0] is not None]
    large = [c[0] for c in cells if c[2] >= 512]
    small = [c[0] for c in cells if c[2] <= 64]
    return {"large": geomean(large), "large_cells": len(large), "small": geomean(small), "small_cells": len(small),
            "lowest": min(cells) if cells else None}


def table(head, rows):
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] +
                     ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]) + "\n"


def markdown(doc, tolerance):
    m, results = doc["machine"], doc["results"]
    peers = peers_of(results)
    tuned = any("grove-tuned" in r["us_per_row"] for r in results)
    out = [f"grove {m.get('grove_git', '?')} ({m.get('grove', '')}), {m['date']}; {m['cpu']} ({m['isa']}), "
           f"{m['threads']} threads of {m['cores']} cores, OMP_WAIT_POLICY={m['wait_policy']}; load average "
           f"{m['loadavg_start'][0]} at the start, {m.get('loadavg_end', ['?'])[0]} at the end. "
           + ", ".join(f"{k} {m[k]}" for k in ["xgboost", "treelite", "tl2cgen", "onnxruntime", "onnxmltools",
                                                 "lightgbm", "lleaves", "catboost", "daal4py"] if k in m)
           + f"; {m['gcc']}. Median (min) of {m['repeat']} repetitions"
           + (f"; each cell the median of {len(m['runs'])} runs' medians (the least minimum), runs of "
              f"{', '.join(m['runs'])}" if "runs" in m else "") + ".\n"]

    head = ["model", "trees", "batch", "grove µs/row", "grove ns/(row·tree)"] + (["grove-tuned µs/row"] if tuned else []) \
        + [f"{p} µs/row (×)" for p in peers]
    rows = []
    for r in results:
        u = r["us_per_row"]
        g = u["grove"]
        row = [r["model"], r["trees"], r["batch"], f"{fmt(g['median'])} ({fmt(g['min'])})",
               fmt(g["median"] * 1000 / r["trees"])]
        if tuned:
            row.append(fmt(u["grove-tuned"]["median"]) if "grove-tuned" in u else "—")
        for p in peers:
            row.append(f"{fmt(u[p]['median'])} ({fmt(ratio(r, p))}×)" if p in u else "—")
        rows.append(row)
    out.append("**Microseconds per row** (grove: median (min); peers: median and peer/grove, above 1× grove is "
               "faster). grove and tl2cgen are timed from C; the other peers through Python, their call "
               "overhead included.\n")
    out.append(table(head, rows))

    out.append("\n**Geometric means of peer/grove** (cells where both ran)\n")
    rows = []
    for p in peers:
        gm = geomeans(results, p)
        low = gm["lowest"]
        rows.append([p, f"{fmt(gm['large'])}× ({gm['large_cells']})" if gm["large"] else "—",
                     f"{fmt(gm['small'])}× ({gm['small_cells']})" if gm["small"] else "—",
                     f"{low[0]:.2f}× ({low[1]}, {low[2]})" if low else "—"])
    if tuned:  # the tuned schedule against each peer, and the heuristic's gap to it (above 1×: tuning pays)
        for p in peers + ["grove"]:
            gm = geomeans(results, p, "grove-tuned")
            low = gm["lowest"]
            if gm["large"] or gm["small"]:
                rows.append([f"{p} / grove-tuned", f"{fmt(gm['large'])}× ({gm['large_cells']})" if gm["large"] else "—",
                             f"{fmt(gm['small'])}× ({gm['small_cells']})" if gm["small"] else "—",
                             f"{low[0]:.2f}× ({low[1]}, {low[2]})" if low else "—"])
    out.append(table(["peer", "batch ≥ 512 (cells)", "batch ≤ 64 (cells)", "lowest cell"], rows))

    core = [r for r in results if r["batch"] == 4096]
    if core:
        names = ["grove"] + (["grove-tuned"] if tuned else []) + peers
        out.append(f"\n**ns per (row × tree) per core at batch 4096** (ns/(row·tree) × {m['threads']} "
                   f"thread{'s' if m['threads'] > 1 else ''})\n")
        out.append(table(["model", "trees"] + names, [
            [r["model"], r["trees"]] + [fmt(r["us_per_row"][n]["median"] * 1000 / r["trees"] * m["threads"])
                                        if n in r["us_per_row"] else "—" for n in names] for r in core]))

    builds, seen = [], set()
    for r in results:
        if r["model"] in seen:
            continue
        seen.add(r["model"])
        b = r["build"]

        def secs(name, key="compile_s"):
            x, cpu = b.get(name, {}).get(key), b.get(name, {}).get("cpu_s") if key == "compile_s" else None
            if x is None:
                return "—"
            return fmt(x) + (f" ({fmt(cpu)})" if cpu is not None else "") + ("*" if b[name].get("cached") else "")
        builds.append([r["model"], r["features"], r["trees"], secs("grove")] + ([secs("grove-tuned")] if tuned else [])
                      + [secs("tl2cgen"), secs("lleaves"), secs("onnxruntime"), secs("onnxruntime", "session_s"),
                         secs("daal4py")])
    out.append("\n**Compile times**, wall (CPU) seconds; * made by an earlier run and cached, the time it took then\n")
    out.append(table(["model", "features", "trees", "grove compile"] + (["grove-tuned"] if tuned else [])
                     + ["tl2cgen (gcc)", "lleaves", "onnxmltools convert", "onnxruntime session", "daal4py convert"],
                     builds))

    floor = doc.get("python_call_floor_us", {})
    if floor:
        out.append("\n**Python call floor** (µs per call of one row through a one-split model: what a Python "
                   "peer's time at batch 1 includes)\n")
        out.append(table(list(floor), [[fmt(v) for v in floor.values()]]))

    names = ["grove"] + (["grove-tuned"] if tuned else []) + peers
    worst = {}
    for r in results:
        w = worst.setdefault(r["model"], {"reference": r["reference"]})
        for n, d in r["max_rel_diff"].items():
            w[n] = max(w.get(n, 0.0), d)
    out.append(f"\n**Largest difference from the reference** (|x − ref| / max(1, |ref|); grove must stay within "
               f"{tolerance:g})\n")
    out.append(table(["model", "reference"] + names, [
        [k, w["reference"]] + ([f"{w[n]:.1e}" if n in w and n != w["reference"] else "—" for n in names])
        for k, w in worst.items()]))
    for n in doc["notes"]:
        out.append(f"- note: {n}\n")
    for f in doc["failures"]:
        out.append(f"- FAIL: {f}\n")
    return "\n".join(out)


def merge(docs):
    """One document of several runs: of the same models and batches (a VM's neighbours slow some runs' cells), or of
    other models (a corpus run model by model), or both. Each engine's cell the median of the medians of the runs
    that have it and the least of their minima, each difference the largest any run saw; cells in the order the
    runs first give them; the first run's machine, with every run's date and the load averages of the first's start
    and the last's end."""
    import statistics
    runs = {}
    for d in docs:
        for r in d["results"]:
            runs.setdefault((r["model"], r["batch"]), []).append(r)
    results = []
    for cell in runs.values():
        first = cell[0]
        r = dict(first, us_per_row={}, max_rel_diff={})
        for e, u in first["us_per_row"].items():
            got = [x["us_per_row"][e] for x in cell if e in x["us_per_row"]]
            r["us_per_row"][e] = dict(u, median=statistics.median(g["median"] for g in got),
                                      min=min(g["min"] for g in got), runs=len(got))
        for e in first["max_rel_diff"]:
            r["max_rel_diff"][e] = max(x["max_rel_diff"][e] for x in cell if e in x["max_rel_diff"])
        results.append(r)
    machine = dict(docs[0]["machine"], runs=[d["machine"]["date"] for d in docs],
                   loadavg_end=docs[-1]["machine"].get("loadavg_end", ["?"]),
                   grove_git=" ".join(dict.fromkeys(d["machine"].get("grove_git", "?") for d in docs)))
    notes = sorted({n for d in docs for n in d["notes"]})
    return {"machine": machine, "python_call_floor_us": docs[0].get("python_call_floor_us", {}), "notes": notes,
            "failures": [f for d in docs for f in d["failures"]], "results": results}


def write_json(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def chart(doc, path):
    """Grouped bars of peer/grove per model, one panel per batch size, on one log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    results = doc["results"]
    peers = peers_of(results)
    batches = sorted({r["batch"] for r in results})
    models = list(dict.fromkeys(r["model"] for r in results))
    all_ratios = [x for r in results for p in peers for x in [ratio(r, p)] if x]
    low, high = min(all_ratios + [0.8]) / 1.3, max(all_ratios + [1.25]) * 1.3
    fig, axes = plt.subplots(len(batches), 1, figsize=(max(8, 0.8 * len(models) + 2), 2.3 * len(batches) + 1.2),
                             sharex=True, squeeze=False)
    width = 0.8 / max(1, len(peers))
    for ax, batch in zip(axes[:, 0], batches):
        cells = {r["model"]: r for r in results if r["batch"] == batch}
        means = []
        for k, p in enumerate(peers):
            xs, ys = [], []
            for i, name in enumerate(models):
                x = ratio(cells[name], p) if name in cells else None
                if x is not None:
                    xs.append(i - 0.4 + width * (k + 0.5))
                    ys.append(x)
            ax.bar(xs, ys, width, color=COLORS.get(p), label=p)
            if ys:
                means.append(f"{p} {geomean(ys):.2f}×")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(f"batch {batch}")
        ax.grid(axis="y", which="major", alpha=0.3)
        ax.set_title("geomean: " + ", ".join(means), fontsize=8, loc="right")
    axes[-1, 0].set_xticks(range(len(models)))
    axes[-1, 0].set_xticklabels(models, rotation=30, ha="right", fontsize=8)
    axes[-1, 0].set_xlim(-0.6, len(models) - 0.4)
    m = doc["machine"]
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(peers), fontsize=8, frameon=False)
    fig.suptitle(f"grove's speedup over each peer (peer's time per row / grove's, medians; above 1×: grove is faster)\n"
                 f"{m['cpu']}, {m['threads']} threads, {m['date']}"
                 + (f" and {len(m['runs']) - 1} later runs (each bar their median)" if len(m.get("runs", [])) > 1 else "")
                 + f", grove {m.get('grove_git', '')}",
                 fontsize=9, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
