"""Black Market renders: text and an RGB picture of the map (each card's face and the side
it faces), the dice, hand sizes and scores. A viewer sees its own hand only; ``god``
shows every hand and unseen cards."""

from __future__ import annotations

import numpy as np

from ripmarket_env.games.blackmarket.events import KIND_NAMES, SIDES, seat_name
from ripmarket_env.games.blackmarket.state import N_SLOTS, PHASE_NAMES

COLOUR_NAMES = ("Red", "Black", "Dual")


def _card_text(db, r, s, viewer, god) -> str:
    d = int(r["map_card"][s])
    if d < 0:
        return "(empty)"
    seen = bool(r["map_seen"][s]) or god
    name = f"{db.point[d].name} [{COLOUR_NAMES[['red', 'black', 'dual'].index(db.point[d].colour)]} {db.point[d].points}pt]" if seen else "(unseen card)"
    face = "face-down" if r["map_down"][s] else "face-up"
    return f"{name}, {face}, faces side {SIDES[int(r['map_side'][s])]}"


def _dice_text(r) -> str:
    if bool(r["done"]):
        return "-"
    out = []
    for i in range(int(r["n_dice"])):
        v = int(r["dice"][i])
        out.append(f"{v}" + (" (used)" if r["dice_used"][i] else ""))
    return ", ".join(out)


def phase_text(engine, g: int = 0) -> str:
    r = engine.state[g]
    if bool(r["done"]):
        return "game over"
    return {"act": "take an action for an unused die", "choose_die": "choose a die",
            "choose_number": "choose the die's new number", "choose_seat": "choose the Heist victim"}[
        PHASE_NAMES[int(r["phase"])]]


def render_text(engine, g: int = 0, viewer: int | None = None, god: bool = False) -> str:
    db = engine.cards
    r = engine.state[g]
    P = engine.num_players
    rules = engine.rules
    mode = "teams" if rules.teams else "free-for-all"
    a_pts, b_pts = engine.side_points(g)
    lines = [f"Black Market - {P} players, {mode}, target {rules.target_points} - turn {int(r['turn']) + 1}"
             f" / {rules.turns_cap}",
             f"Sides: A {a_pts} pt, B {b_pts} pt.  Point deck {int(r['pdeck_n'])}, Hand deck {int(r['hdeck_n'])},"
             f" discard R{int(r['hdisc'][0])} B{int(r['hdisc'][1])} F{int(r['hdisc'][2])}",
             "Map:"]
    for s in range(N_SLOTS):
        lines.append(f"  {s + 1}: {_card_text(db, r, s, viewer, god)}")
    lines.append(f"Dice ({seat_name(int(r['turn_player']))}): {_dice_text(r)}")
    lines.append("Players:")
    for q in range(P):
        owned = [f"{db.point[d].name}" + (f" x{int(n)}" if n > 1 else "") + (" (spent)" if r["spent"][q, d] else "")
                 for d, n in enumerate(r["owned"][q]) if n]
        me = " (you)" if viewer is not None and int(viewer) == q else ""
        turn = " <" if (not bool(r["done"]) and int(r["actor"]) == q) else ""
        hand = f"{int(r['hand_n'][q])} cards"
        if god or (viewer is not None and int(viewer) == q):
            hand += " (" + ", ".join(f"{KIND_NAMES[k]} {int(r['hand'][q, k])}" for k in range(3)) + ")"
        lines.append(f"  {seat_name(q)}{me} side {SIDES[q % 2]}: {int(r['points'][q])} pt, hand {hand};"
                     f" owns {', '.join(owned) or '-'}{turn}")
    if bool(r["done"]):
        lines.append("Game over: winner(s) " + (", ".join(seat_name(q) for q in engine.winners(g)) or "-"))
    else:
        lines.append(f"Next: {seat_name(int(r['actor']))} must {phase_text(engine, g)}")
    return "\n".join(lines)


def render_rgb(engine, g: int = 0, viewer: int | None = None, god: bool = False,
               size: tuple[int, int] = (960, 720)) -> np.ndarray:
    """Game ``g`` as an ``(H, W, 3)`` uint8 picture (matplotlib, Agg backend): the six map
    slots with each card's face, points and the side it faces (an arrow), the dice,
    every seat's hand size and points, side totals."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

    db = engine.cards
    P = engine.num_players
    r = engine.state[g]
    W, H = size
    fig = Figure(figsize=(W / 100, H / 100), dpi=100, facecolor="#1b1b24")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, W)
    ax.set_ylim(0, H)
    ax.axis("off")
    ax.add_patch(Rectangle((W * 0.08, H * 0.3), W * 0.84, H * 0.4, facecolor="#1f5b3a", edgecolor="#c8a85a", lw=3))
    a_pts, b_pts = engine.side_points(g)
    ax.text(W / 2, H - 20, f"Black Market  ·  turn {int(r['turn']) + 1}  ·  side A {a_pts} pt  ·  side B {b_pts} pt"
            f"  ·  target {engine.rules.target_points}", ha="center", va="center", color="white", fontsize=14,
            weight="bold")
    fill = {"red": "#d64545", "black": "#3a3a3a", "dual": "#8a5cc2"}
    cw, ch = W * 0.11, H * 0.22
    for s in range(N_SLOTS):
        x = W * 0.1 + s * (W * 0.8 / 6) + 6
        y = H * 0.5 - ch / 2
        ax.text(x + cw / 2, y - 12, f"slot {s + 1}", ha="center", va="center", color="#f3e6b5", fontsize=9)
        d = int(r["map_card"][s])
        if d < 0:
            ax.add_patch(FancyBboxPatch((x, y), cw, ch, boxstyle="round,pad=2", facecolor="none",
                                        edgecolor="#777", ls="--"))
            continue
        down = bool(r["map_down"][s])
        seen = bool(r["map_seen"][s]) or god
        card = db.point[d]
        face = "#555566" if down else fill[card.colour]
        ax.add_patch(FancyBboxPatch((x, y), cw, ch, boxstyle="round,pad=2", facecolor=face, edgecolor="white",
                                    lw=2, ls="--" if down else "-"))
        if seen:
            ax.text(x + cw / 2, y + ch * 0.68, str(card.points), ha="center", va="center", fontsize=20,
                    weight="bold", color="white")
            ax.text(x + cw / 2, y + ch * 0.38, card.name[:13], ha="center", va="center", fontsize=8, color="white")
        else:
            ax.text(x + cw / 2, y + ch / 2, "?", ha="center", va="center", fontsize=22, color="#ffd23f")
        ax.text(x + cw / 2, y + ch * 0.16, "face-down" if down else "face-up", ha="center", va="center",
                fontsize=7, color="#e0e0e0")
        side = int(r["map_side"][s])  # side A sits at the bottom, side B at the top
        y0, y1 = (y, y - 40) if side == 0 else (y + ch, y + ch + 40)
        ax.add_patch(FancyArrowPatch((x + cw / 2, y0), (x + cw / 2, y1), arrowstyle="-|>", mutation_scale=14,
                                     color="#ffd23f", lw=2))
    for q in range(P):
        per_side = P // 2
        i = q // 2
        sx = W * (i + 1) / (per_side + 1)
        sy = H * 0.14 if q % 2 == 0 else H * 0.86
        active = not bool(r["done"]) and int(r["actor"]) == q
        ax.add_patch(FancyBboxPatch((sx - 90, sy - 28), 180, 56, boxstyle="round,pad=3",
                                    facecolor="#2e4a7a" if active else "#2a2a36", edgecolor="#ffd23f" if active else "#888"))
        label = f"{seat_name(q)} (side {SIDES[q % 2]})" + (" · you" if viewer is not None and int(viewer) == q else "")
        ax.text(sx, sy + 12, label, ha="center", va="center", fontsize=9, color="white", weight="bold")
        hand = f"hand {int(r['hand_n'][q])}"
        if god or (viewer is not None and int(viewer) == q):
            hand += " (" + " ".join(f"{KIND_NAMES[k][0]}{int(r['hand'][q, k])}" for k in range(3)) + ")"
        ax.text(sx, sy - 10, f"{int(r['points'][q])} pt  ·  {hand}", ha="center", va="center", fontsize=8.5,
                color="#f3e6b5")
    ax.text(W / 2, H * 0.25, f"Dice: {_dice_text(r)}", ha="center", va="center", color="white", fontsize=12)
    if bool(r["done"]):
        foot = "Game over · winner(s): " + (", ".join(seat_name(q) for q in engine.winners(g)) or "-")
    else:
        foot = f"Next: {seat_name(int(r['actor']))} must {phase_text(engine, g)}"
    ax.text(W / 2, H * 0.03, foot, ha="center", va="center", color="white", fontsize=10)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
    fig.clear()
    return img
