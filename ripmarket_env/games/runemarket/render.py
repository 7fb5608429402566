"""Text and picture renders of a Rune Market table (RM-8.4: a viewer's render shows only
its own hand; ``god`` shows every hand).

Each seat's table: its Red and Blue Shelters with the Runes inside, Boat Shelters and
Bandits (owner and amount paid), loose Runes, hand size and score; the Market; the draw
and discard piles; the pending decision."""

from __future__ import annotations

import numpy as np

from ripmarket_env.games.runemarket.actions import describe
from ripmarket_env.games.runemarket.config import C_REMOVAL
from ripmarket_env.games.runemarket.state import INTENT_NAMES, PHASE_NAMES

COL = ("Red", "Blue")


def _hand_text(engine, r, q) -> str:
    parts = []
    for d in range(13):
        k = int(r["hand"][q, d])
        if k:
            parts.append(engine.cards.name(d) + (f" x{k}" if k > 1 else ""))
    return ", ".join(parts) or "(empty)"


def shelter_text(engine, r, q, col) -> str:
    if not r["shelter"][q, col]:
        return f"no {COL[col]} Shelter"
    t = f"{COL[col]} Shelter [{int(r['inside'][q, col])} inside]"
    if r["boat"][q, col]:
        t += " +Boat"
    owner = int(r["bandit"][q, col])
    if owner >= 0:
        t += f" +Bandit of P{owner} (paid {int(r['bandit_paid'][q, col])}/{int(engine.cfg[C_REMOVAL])})"
    return t


def phase_text(engine, g: int = 0) -> str:
    r = engine.state[g]
    if r["done"]:
        return "game over"
    ph = PHASE_NAMES[int(r["phase"])]
    t = f"P{int(r['actor'])} decides: {ph}"
    if int(r["intent"]) >= 0:
        t += f" ({INTENT_NAMES[int(r['intent'])]}"
        if int(r["other"]) >= 0:
            t += f", P{int(r['turn_player'])} vs P{int(r['other'])}"
        if ph == "defend":
            t += f", attack {int(r['pend_value'])}"
        if ph == "payment":
            t += f", paid {int(r['pay_sum'])}"
        t += ")"
    return t


def render_text(engine, g: int = 0, viewer: int | None = None, god: bool = False) -> str:
    r = engine.state[g]
    P = engine.num_players
    lines = [
        f"The Rune Market - turn {int(r['total_turns'])}, P{int(r['turn_player'])}'s turn; {phase_text(engine, g)}",
        f"Market: {int(r['market'][0])} Red, {int(r['market'][1])} Blue Runes; {int(r['market_boats'])} Boat "
        f"Shelters; {int(r['market_bandits'])} Bandits ({int(r['removed_bandits'])} out of the game)",
        f"Draw pile {int(r['deck_n'])}, discard {int(r['discard_n'])}",
    ]
    for q in range(P):
        mark = ">" if (not r["done"] and int(r["actor"]) == q) else " "
        score = int(r["loose"][q].sum() + r["inside"][q].sum())
        win = " WINNER" if r["done"] and r["winners"][q] else ""
        lines.append(f"{mark}P{q}: {score} Runes{win} | hand {int(r['hand_n'][q])} | "
                     f"{shelter_text(engine, r, q, 0)}; {shelter_text(engine, r, q, 1)}; "
                     f"loose {int(r['loose'][q, 0])} Red {int(r['loose'][q, 1])} Blue")
        if god or viewer == q:
            lines.append(f"    hand: {_hand_text(engine, r, q)}")
    if not r["done"] and (god or viewer == int(r["actor"])):
        lines.append("legal: " + "; ".join(f"{a}={describe(a)}" for a in engine.legal_actions(g)))
    return "\n".join(lines) + "\n"


def render_rgb(engine, g: int = 0, viewer: int | None = None, god: bool = False,
               size: tuple[int, int] = (960, 720)) -> np.ndarray:
    """Game ``g`` as an ``(H, W, 3)`` uint8 picture (matplotlib, Agg): seats around the
    table, each with its Shelters (Runes inside as dots, Boat and Bandit marks), loose
    Runes, hand size and score; the Market in the middle."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, Ellipse, Rectangle

    r = engine.state[g]
    P = engine.num_players
    W, H = size
    fig = Figure(figsize=(W / 100, H / 100), dpi=100, facecolor="#1d1d28")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, W)
    ax.set_ylim(0, H)
    ax.axis("off")
    cx, cy = W / 2, H / 2
    ax.add_patch(Ellipse((cx, cy), W * 0.5, H * 0.42, facecolor="#214f6b", edgecolor="#d0b060", lw=3))
    ax.text(cx, H - 20, f"The Rune Market - turn {int(r['total_turns'])} - {phase_text(engine, g)}",
            ha="center", va="center", color="white", fontsize=13, weight="bold")
    red, blue = "#d8443c", "#3f7fe0"
    for i, (n, colr) in enumerate(((int(r["market"][0]), red), (int(r["market"][1]), blue))):
        for k in range(n):
            ax.add_patch(Circle((cx - 95 + 19 * k, cy + 22 - 30 * i), 7, facecolor=colr, edgecolor="white"))
    ax.text(cx, cy - 45, f"Boat Shelters {int(r['market_boats'])}   Bandits {int(r['market_bandits'])}   "
            f"draw {int(r['deck_n'])}   discard {int(r['discard_n'])}", ha="center", color="#f0e8c8", fontsize=9)
    rx, ry = W * 0.38, H * 0.36
    for q in range(P):
        ang = -np.pi / 2 - 2 * np.pi * q / P
        sx, sy = cx + rx * np.cos(ang), cy + ry * np.sin(ang)
        acting = not r["done"] and int(r["actor"]) == q
        ax.add_patch(Rectangle((sx - 105, sy - 48), 210, 96, facecolor="#2b2b3a",
                               edgecolor="#ffd54a" if acting else "#777", lw=3 if acting else 1))
        score = int(r["loose"][q].sum() + r["inside"][q].sum())
        title = f"P{q}  {score} Runes  hand {int(r['hand_n'][q])}" + ("  WIN" if r["done"] and r["winners"][q] else "")
        ax.text(sx, sy + 36, title, ha="center", va="center", color="white", fontsize=9, weight="bold")
        for col, colr in ((0, red), (1, blue)):
            x0 = sx - 100 + col * 102
            if r["shelter"][q, col]:
                ax.add_patch(Rectangle((x0, sy - 30), 96, 50, facecolor="none", edgecolor=colr, lw=2))
                for k in range(int(r["inside"][q, col])):
                    ax.add_patch(Circle((x0 + 10 + 12 * (k % 7), sy + 10 - 12 * (k // 7)), 4.5, facecolor=colr))
                tags = []
                if r["boat"][q, col]:
                    tags.append("Boat")
                if int(r["bandit"][q, col]) >= 0:
                    tags.append(f"Bandit P{int(r['bandit'][q, col])} {int(r['bandit_paid'][q, col])}")
                ax.text(x0 + 48, sy - 24, " ".join(tags), ha="center", color="#ffe08a", fontsize=7)
            lo = int(r["loose"][q, col])
            if lo:
                ax.text(x0 + 48, sy - 42, f"loose {lo}", ha="center", color=colr, fontsize=8)
    if viewer is not None or god:
        seats = range(P) if god else [viewer]
        ys = 12
        for q in seats:
            ax.text(8, ys, f"P{q} hand: {_hand_text(engine, r, q)}", color="#dddddd", fontsize=8)
            ys += 14
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
    return img
