"""``ripmarket bench --suite engine --plot FILE``: the engine report as a chart.

One panel per part of the report: agent steps per CPU-second at each table and batch
(without and with observations), and with ``--peers`` our two loops against each peer
(medians of the alternated rounds) with the targets drawn as lines at 5x and 2.5x the
best peer's rate. matplotlib comes with the ``eval`` extra.
"""

from __future__ import annotations

from pathlib import Path

SUFFIXES = (".png", ".svg", ".pdf")
_OURS = ("#2f6f9f", "#8fbcd9")  # without, with observations
_PEER = "#9a9a9a"


def plot_problem(path: Path) -> str | None:
    """Why ``path`` cannot take the chart (its suffix, a directory that cannot be made or
    written, or no matplotlib), else None. Checked before the bench runs (a path that is a
    folder, a device or a pipe: ``cli.check_out_file``)."""
    import os

    if path.suffix.lower() not in SUFFIXES:
        return f"--plot {str(path)!r} is not allowed; give a file ending in {', '.join(SUFFIXES)}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--plot {str(path)!r}: cannot make its directory ({exc})"
    if not os.access(path.parent, os.W_OK):
        return f"--plot {str(path)!r}: its directory is not writable"
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        return f"--plot needs matplotlib ({exc}); install it with: pip install -e '.[eval]'"
    return None


def figure(report: dict):
    """The matplotlib figure of an engine report (``app.bench.run_bench``, with its
    ``peers`` part when there is one)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peers = report.get("peers")
    panels = 2 if peers else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.6), squeeze=False)
    _grid_panel(axes[0][0], report)
    if peers:
        _peers_panel(axes[0][1], peers)
    fig.suptitle(f"ripmarket bench --suite engine --game {report['game']}", fontsize=11)
    fig.tight_layout()
    return fig


def _grid_panel(ax, report: dict) -> None:
    rows = report["results"]
    keys = sorted({(r["players"], r["batch"]) for r in rows})
    rate = {(r["players"], r["batch"], r["observations"]): r["steps_per_cpu_sec"] / 1e6 for r in rows}
    width = 0.4
    for j, obs in enumerate((False, True)):
        xs = [i + (j - 0.5) * width for i in range(len(keys))]
        ys = [rate.get((p, b, obs), 0.0) for p, b in keys]
        ax.bar(xs, ys, width, color=_OURS[j], label="with observations" if obs else "without observations")
    ax.set_xticks(range(len(keys)), [f"{p}p\n×{b}" for p, b in keys], fontsize=8)
    ax.set_xlabel("players × games at once (batch)")
    ax.set_ylabel("M agent steps per CPU-second")
    threads = report.get("environment", {}).get("numba_threads")
    on = f", {threads} numba thread{'s' if threads != 1 else ''}" if threads else ""
    ax.set_title(f"Random legal play{on}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def _peers_panel(ax, peers: dict) -> None:
    rows = sorted(peers["results"], key=lambda x: x["median_steps_per_cpu_sec"])
    labels, values, colors = [], [], []
    for x in rows:
        ours = x["engine"] == "ours"
        labels.append(f"{x['name']} (ours{', +obs' if x['observations'] else ''})" if ours
                      else f"{x['engine']}: {x['name'].split('(')[0]}")
        values.append(x["median_steps_per_cpu_sec"] / 1e6)
        colors.append(_OURS[1 if x["observations"] else 0] if ours else _PEER)
    ax.barh(range(len(rows)), values, color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    cfg = peers["config"]
    ax.set_xlabel(f"M agent steps per CPU-second (median of {cfg['rounds']} alternated rounds)")
    title = f"Against the peers: {cfg['players']} players, batch {cfg['batch']}"
    ratios = [r for r in peers["ratios"] if r["ratio_per_cpu_sec"] is not None]
    if ratios:
        best = ratios[0]["best_peer"]
        base = next(x["median_steps_per_cpu_sec"] for x in peers["results"]
                    if f"{x['engine']}:{x['name']}" == best) / 1e6
        for r, style in zip(ratios, ("--", ":")):
            what = "with" if r["observations"] else "without"
            ax.axvline(base * r["target"], color="#c0392b", linestyle=style, linewidth=1,
                       label=f"target {what} observations: {r['target']:g}× best peer")
        title += "\n" + ", ".join(f"{r['ratio_per_cpu_sec']:.2f}× ({'with' if r['observations'] else 'without'} obs.)"
                                  for r in ratios) + f" the best peer ({best.split('(')[0]})"
        ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)


def write(report: dict, path: Path) -> Path:
    """Draw ``report`` into ``path`` (.png, .svg or .pdf; parent directories made)."""
    import matplotlib.pyplot as plt

    fig = figure(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, dpi=130)
    finally:
        plt.close(fig)
    return path
