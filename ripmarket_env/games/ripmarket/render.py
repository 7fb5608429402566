"""Pictures of a game: a text table and an image, for people, logs and golden files.

``render_text(engine, g, viewer, god)`` prints one game of an ``Engine`` as a readable
table; ``render_rgb(engine, g, viewer)`` draws it (matplotlib, Agg) and returns an
``(H, W, 3)`` uint8 array. ``describe_action(engine, action, g)`` names a decision in the
game's own words, before it is taken.

What is shown follows R-12.3: every public fact always; a hand only to its owner
(``viewer``) or with ``god=True``; a face-down card only to its owner or in the god view.
Renderers read the state and never change it; they hold no rules.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.games.ripmarket.config import C_HP, C_MARKET, C_MAX_ROUNDS
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label  # noqa: F401
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

_PHASE_TEXT = {
    "acquire": "acquire a card (Living Deck or Market)",
    "play": "play a card",
    "choose_target": "choose a target for {card}",
    "choose_market_slot": "choose a Market slot for {card}",
    "choose_replacement": "choose the card that replaces {card}",
    "ghost": "haunt (play a Shadow card) or pass",
    "choose_victim": "choose the victim of {shadow}",
    "game_over": "nobody (the game is over)",
}


def round_shown(r, cfg) -> int:
    """The round a game's state is in, counted from 1 as the players count it: the
    epilogue is the round after the last one (R-9.4), and a game the round limit ended
    shows its last round, not the one after it (R-9.3: ``round_num`` counts the rounds
    played, and the limit ends the game once the last is played)."""
    n = int(r["round_num"])
    if bool(r["done"]) and n >= int(cfg[C_MAX_ROUNDS]):
        return n
    return n + (2 if bool(r["epilogue"]) else 1)

def _counts_text(counts, label) -> str:
    parts = []
    for d, k in enumerate(counts):
        k = int(k)
        if k > 0:
            parts.append(label(d) + (f" x{k}" if k > 1 else ""))
    return ", ".join(parts) if parts else "-"


def phase_text(engine, g: int = 0, viewer: int | None = None, god: bool = False) -> str:
    """What the next decision asks, e.g. ``choose a target for Hex (3)``, as ``viewer`` may
    know it: the Shadow card a Ghost is about to attach is still in its Shadow hand, so it
    is named only to that Ghost (or ``god``), R-12.3; others read "a Shadow card"."""
    r = engine.state[g]
    name = PHASE_NAMES[min(int(r["phase"]), len(PHASE_NAMES) - 1)]
    db = engine.cards
    card = card_label(db, r["pend_card"]) if int(r["pend_card"]) >= 0 else "the card"
    own = god or (viewer is not None and int(viewer) == int(r["actor"]))
    if int(r["pend_shadow"]) < 0:
        shadow = "the Shadow card"
    else:
        shadow = shadow_label(db, r["pend_shadow"]) if own else "a Shadow card"
    return _PHASE_TEXT.get(name, name).format(card=card, shadow=shadow)


def describe_action(engine, action: int, g: int = 0, public: bool = False) -> str:
    """The decision ``action`` of game ``g``'s current actor, in words, BEFORE it is taken.

    Targets are named by absolute seat. With ``public=True`` a face-down play reads
    "plays a card face-down" (what the other seats see); otherwise the card is named.
    """
    db = engine.cards
    r = engine.state[g]
    P = engine.num_players
    seat = int(r["actor"])
    who = seat_name(seat)
    kind, arg = engine.actions.decode(int(action))
    phase = PHASE_NAMES[min(int(r["phase"]), len(PHASE_NAMES) - 1)]
    if kind == "acquire_deck":
        return f"{who} takes the top card of the Living Deck"
    if kind == "acquire_market":
        d = int(r["market"][arg])
        card = card_label(db, d) if d >= 0 else "(empty)"
        return f"{who} takes {card} from Market slot {arg}"
    if kind == "card":
        if phase == "choose_replacement":
            old = int(r["pend_card"])
            old_txt = card_label(db, old) if old >= 0 else "the card"
            if bool(db.living_face_down[arg]):  # a face-down replacement
                return (f"{who} replaces {old_txt} with a card face-down" if public
                        else f"{who} replaces {old_txt} with {card_label(db, arg)} face-down")
            return f"{who} replaces {old_txt} with {card_label(db, arg)}"
        if bool(db.living_face_down[arg]):
            return f"{who} plays a card face-down" if public else f"{who} plays {card_label(db, arg)} face-down"
        return f"{who} plays {card_label(db, arg)}"
    if kind == "target":
        t = (seat + arg) % P
        if phase == "choose_victim":
            s = int(r["pend_shadow"])
            what = shadow_label(db, s) if s >= 0 else "the Shadow card"
            return f"{who} haunts {seat_name(t)} with {what}"
        c = int(r["pend_card"])
        what = card_label(db, c) if c >= 0 else "the card"
        return f"{who} targets {seat_name(t)} with {what}"
    if kind == "market_slot":
        d = int(r["market"][arg])
        there = card_label(db, d) if d >= 0 else "(empty)"
        c = int(r["pend_card"])
        what = card_label(db, c) if c >= 0 else "the card"
        return f"{who} chooses Market slot {arg} ({there}) for {what}"
    if kind == "pass":
        return f"{who} passes"
    return f"{who} plays the Shadow card {shadow_label(db, arg)}"


# ------------------------------------------------------------------------------ text
def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]

    def fmt(cells):
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return [fmt(header)] + [fmt(row) for row in rows]


def _played_text(db, r, q: int, viewer, god: bool) -> str:
    d = int(r["played"][q])
    if d < 0:
        return "-"
    if bool(r["face_down"][q]):
        if god or viewer == q:
            return f"face-down: {card_label(db, d)}"
        return "face-down"
    return card_label(db, d)


def _took_text(db, r, q: int) -> str:
    acq = int(r["acquired"][q])
    if acq == 1:
        return "deck"
    if acq == 2:
        if "acq_card" in r.dtype.names and int(r["acq_card"][q]) >= 0:
            return f"Market: {card_label(db, r['acq_card'][q])}"
        return "Market"
    return "-"


def render_text(engine, g: int = 0, viewer: int | None = None, god: bool = False) -> str:
    """Game ``g`` as a text table, seen by ``viewer`` (a seat), by nobody (public view,
    ``viewer=None``) or by everyone (``god=True``: every hand and face-down card)."""
    db = engine.cards
    P = engine.num_players
    r = engine.state[g]
    cfg = engine.cfg
    if viewer is not None and not 0 <= int(viewer) < P:
        raise ValueError(f"viewer must be a seat in 0..{P - 1} or None, got {viewer}")
    viewer = None if viewer is None else int(viewer)
    hp0 = int(cfg[C_HP])
    done = bool(r["done"])
    actor = -1 if done else int(r["actor"])
    fp = int(r["first_player"])
    lines = []
    title = f"R.I.P. Market · {P} players · round {round_shown(r, cfg)} · rule: {rule_label(r['rule'])}"
    if bool(r["epilogue"]):
        title += " · epilogue (display only)"
    lines.append(title)
    lines.append(
        f"Living Deck {int(r['deck_n'])} · Living discard {int(r['discard_n'])} · "
        f"Shadow Deck {int(r['shadow_deck_n'])} · Shadow discard {int(r['shadow_discard_n'])}"
    )
    market = []
    for k in range(int(cfg[C_MARKET])):
        d = int(r["market"][k])
        market.append(f"[{k}] " + (card_label(db, d) if d >= 0 else "(empty)"))
    lines.append("Market: " + " · ".join(market))
    if done:
        lines.append("Next: nobody (the game is over)")
    else:
        lines.append(f"Next: {seat_name(actor)} (seat {actor}) must {phase_text(engine, g, viewer, god)}")
    lines.append("")

    header = ["", "seat", "player", "HP", "status", "hand", "shadow", "took", "played", "target", "haunted by"]
    rows = []
    for q in range(P):
        marks = ("*" if q == fp and not done else "") + (">" if q == actor else "")
        alive = bool(r["alive"][q])
        hp = int(r["hp"][q])
        t = int(r["target"][q])
        haunt = [shadow_label(db, r["attached"][q, i]) for i in range(int(r["attached_n"][q]))]
        rows.append([
            marks,
            str(q),
            seat_name(q) + (" (you)" if q == viewer else ""),
            f"{hp}/{hp0}",
            "living" if alive else "GHOST",
            str(int(r["hand_n"][q])),
            str(int(r["shadow_n"][q])),
            _took_text(db, r, q),
            _played_text(db, r, q, viewer, god),
            seat_name(t) if t >= 0 and int(r["played"][q]) >= 0 else "-",
            ", ".join(haunt) if haunt else "-",
        ])
    lines.extend(_table(header, rows, right={1, 3, 5, 6}))
    lines.append("(* First Player, > decides next)")

    def hand_lines(q: int, prefix: str) -> list[str]:
        living = _counts_text(r["hand"][q], lambda d: card_label(db, d))
        shadow = _counts_text(r["shadow_hand"][q], lambda s: shadow_label(db, s))
        return [f"{prefix}{seat_name(q)}: {living} | Shadow hand: {shadow}"]

    def own_hand(q: int) -> str:
        living = _counts_text(r["hand"][q], lambda d: card_label(db, d))
        shadow = _counts_text(r["shadow_hand"][q], lambda s: shadow_label(db, s))
        return f"Your hand ({seat_name(q)}): {living} | Shadow hand: {shadow}"

    if god:
        lines.append("")
        lines.append("Hands (god view):")
        for q in range(P):
            lines.extend(hand_lines(q, "  "))
    elif viewer is not None:
        lines.append("")
        lines.append(own_hand(viewer))

    if int(r["round_num"]) > 0 or done or bool(r["epilogue"]):
        scores = []
        for q in range(P):
            if bool(r["last_competed"][q]):
                scores.append(f"{seat_name(q)} {int(r['last_score'][q])}")
        damage = [f"{seat_name(q)} {int(r['last_damage'][q])}" for q in range(P) if int(r["last_damage"][q])]
        lines.append("")
        lines.append(
            f"Last resolution: rule {rule_label(r['last_rule'])}; scores "
            + (", ".join(scores) if scores else "-")
            + "; damage "
            + (", ".join(damage) if damage else "-")
        )
    if done:
        winners = [seat_name(q) for q in range(P) if bool(r["winners"][q])]
        rewards = ", ".join(f"{seat_name(q)} {float(r['final_rewards'][q]):+.3f}" for q in range(P))
        lines.append(f"Game over: winner(s) {', '.join(winners) if winners else '-'}; rewards {rewards}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ image
def _short(name: str, n: int = 14) -> str:
    return name if len(name) <= n else name[: n - 1] + "."


def render_rgb(engine, g: int = 0, viewer: int | None = None, god: bool = False,
               size: tuple[int, int] = (960, 720)) -> np.ndarray:
    """Game ``g`` drawn as an ``(H, W, 3)`` uint8 picture (matplotlib, Agg backend).

    Seats sit around the table with HP pips (Ghosts grey and dashed), the First Player's
    star, the card each seat played (face-down cards dark, unless ``viewer`` owns them or
    ``god``), arrows to targets, attached Shadow cards, the Market row and the active rule.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, Ellipse, FancyArrowPatch, FancyBboxPatch, Rectangle

    db = engine.cards
    P = engine.num_players
    r = engine.state[g]
    cfg = engine.cfg
    hp0 = int(cfg[C_HP])
    done = bool(r["done"])
    actor = -1 if done else int(r["actor"])
    W, H = size
    dpi = 100
    fig = Figure(figsize=(W / dpi, H / dpi), dpi=dpi, facecolor="#1b1b24")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, W)
    ax.set_ylim(0, H)
    ax.axis("off")
    cx, cy = W / 2, H * 0.50
    ax.add_patch(Ellipse((cx, cy), W * 0.56, H * 0.50, facecolor="#1f5b3a", edgecolor="#c8a85a", lw=3))

    title = f"R.I.P. Market  ·  round {round_shown(r, cfg)}  ·  rule: {rule_label(r['rule'])}"
    if bool(r["epilogue"]):
        title += "  ·  epilogue"
    ax.text(W / 2, H - 22, title, ha="center", va="center", color="white", fontsize=15, weight="bold")
    ax.text(
        W / 2, H - 48,
        f"Living Deck {int(r['deck_n'])}   discard {int(r['discard_n'])}   "
        f"Shadow Deck {int(r['shadow_deck_n'])}   Shadow discard {int(r['shadow_discard_n'])}",
        ha="center", va="center", color="#cfcfcf", fontsize=10,
    )

    # Market row in the middle of the table.
    m = int(cfg[C_MARKET])
    cw, ch = 78, 56
    x0 = cx - (m * cw + (m - 1) * 10) / 2
    ax.text(cx, cy + ch / 2 + 16, "Market", ha="center", va="center", color="#f3e6b5", fontsize=10)
    for k in range(m):
        d = int(r["market"][k])
        x = x0 + k * (cw + 10)
        ax.add_patch(Rectangle((x, cy - ch / 2), cw, ch, facecolor="#f7f1e1" if d >= 0 else "#2c6b48",
                               edgecolor="#6b5a2e", lw=1.5))
        if d >= 0:
            ax.text(x + cw / 2, cy + 8, str(db.living[d].value), ha="center", va="center", fontsize=16,
                    weight="bold", color="#222")
            ax.text(x + cw / 2, cy - 16, _short(db.living[d].name, 12), ha="center", va="center", fontsize=7,
                    color="#222")

    # Seats around the table, seat 0 at the bottom, clockwise.
    rx, ry = W * 0.40, H * 0.34
    card_pos = {}
    seat_pos = {}
    for q in range(P):
        ang = -np.pi / 2 - 2 * np.pi * q / P
        sx, sy = cx + rx * np.cos(ang), cy + ry * np.sin(ang)
        seat_pos[q] = (sx, sy)
        card_pos[q] = (cx + 0.55 * rx * np.cos(ang), cy + 0.52 * ry * np.sin(ang))
    for q in range(P):
        sx, sy = seat_pos[q]
        alive = bool(r["alive"][q])
        bw, bh = 132, 62
        face = "#e9e4d8" if alive else "#55586a"
        edge = "#ffd23f" if q == actor else ("#8a8a8a" if not alive else "#3a3a3a")
        ax.add_patch(FancyBboxPatch((sx - bw / 2, sy - bh / 2), bw, bh, boxstyle="round,pad=3",
                                    facecolor=face, edgecolor=edge, lw=3.5 if q == actor else 1.5,
                                    linestyle="-" if alive else "--"))
        txt_color = "#1a1a1a" if alive else "#e6e6f0"
        label = seat_name(q) + (" (you)" if viewer == q else "")
        ax.text(sx, sy + 18, label, ha="center", va="center", fontsize=9, weight="bold", color=txt_color)
        if alive:
            hp = int(r["hp"][q])
            for i in range(hp0):
                px = sx - (hp0 - 1) * 9 + i * 18
                ax.add_patch(Circle((px, sy + 1), 6, facecolor="#d62828" if i < hp else "none",
                                    edgecolor="#7a1010", lw=1.2))
        else:
            ax.text(sx, sy + 1, "GHOST", ha="center", va="center", fontsize=10, weight="bold", color="#b9c0ff")
        ax.text(sx, sy - 18, f"hand {int(r['hand_n'][q])}  shadow {int(r['shadow_n'][q])}",
                ha="center", va="center", fontsize=7.5, color=txt_color)
        if q == int(r["first_player"]) and not done:
            ax.plot([sx + bw / 2 - 4], [sy + bh / 2 - 4], marker="*", markersize=16, color="#ffd23f",
                    markeredgecolor="#7a5c00")
        haunt = [shadow_label(db, r["attached"][q, i]) for i in range(int(r["attached_n"][q]))]
        for i, name in enumerate(haunt):
            ax.text(sx, sy - bh / 2 - 11 - 14 * i, _short(name, 16), ha="center", va="center", fontsize=7,
                    color="white", bbox=dict(boxstyle="round,pad=0.2", facecolor="#5b2a86", edgecolor="none"))
        if done and bool(r["winners"][q]):
            ax.text(sx, sy + bh / 2 + 12, "WINNER", ha="center", va="center", fontsize=9, weight="bold",
                    color="#ffd23f")

    # Played cards and targets.
    for q in range(P):
        d = int(r["played"][q])
        if d < 0:
            continue
        px, py = card_pos[q]
        cw2, ch2 = 46, 62
        hidden = bool(r["face_down"][q]) and not (god or viewer == q)
        ax.add_patch(Rectangle((px - cw2 / 2, py - ch2 / 2), cw2, ch2,
                               facecolor="#2b2d42" if hidden else "#fffaf0",
                               edgecolor="#ffd23f" if bool(r["face_down"][q]) else "#333", lw=1.5))
        if hidden:
            ax.text(px, py, "?", ha="center", va="center", fontsize=18, color="#ffd23f", weight="bold")
        else:
            ax.text(px, py + 8, str(db.living[d].value), ha="center", va="center", fontsize=16, weight="bold",
                    color="#222")
            ax.text(px, py - 18, _short(db.living[d].name, 9), ha="center", va="center", fontsize=6, color="#222")
        t = int(r["target"][q])
        if 0 <= t < P and t != q:
            tx, ty = seat_pos[t]
            ax.add_patch(FancyArrowPatch((px, py), (tx, ty), arrowstyle="-|>", mutation_scale=12,
                                         color="#ff9f1c", lw=1.5, shrinkA=30, shrinkB=34, alpha=0.85))

    if done:
        winners = ", ".join(seat_name(q) for q in range(P) if bool(r["winners"][q])) or "-"
        footer = f"Game over  ·  winner(s): {winners}"
    else:
        footer = f"Next: {seat_name(actor)} must {phase_text(engine, g, viewer, god)}"
    ax.text(W / 2, 18, footer, ha="center", va="center", color="white", fontsize=11)
    if viewer is not None and 0 <= int(viewer) < P:
        v = int(viewer)
        own = _counts_text(r["hand"][v], lambda d: card_label(db, d))
        sh = _counts_text(r["shadow_hand"][v], lambda s: shadow_label(db, s))
        ax.text(W / 2, 40, f"Your hand: {own}   ·   Shadow hand: {sh}", ha="center", va="center",
                color="#f3e6b5", fontsize=8.5)

    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
    fig.clear()
    return img
