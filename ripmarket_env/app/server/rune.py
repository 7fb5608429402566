"""The Rune Market on the web server: ``/rune`` (the page) and ``/api/rune/games``.

The same conventions as R.I.P. Market's API: the seat token travels in the
``X-Seat-Token`` header, every answer names the pending ``decision_number`` (a repeated or
stale answer is refused and changes nothing), bad requests get a one-line ``detail``.
Games are kept in the server's SQLite store (``store.RuneGames``: the ``rune_games``
table, a row per game: settings, seed, every seat's actions so far, the seat token's
SHA-256 digest), written after every answered decision before the answer is sent, so a
restarted server on the same ``--db`` file brings each game back on its first request
(re-playing its actions, no bot asked again) with the same token, decision number and
table. A stored row that cannot be read or re-played answers 410 naming the reason; the
other games are not affected. The server's limits (``Limits``, the same ``serve`` options
as R.I.P. Market's games) hold: at most ``max_games_per_client`` live games per client and
``max_games`` in all, refused with 429 and ``Retry-After``; a live game expires when no
decision was answered for ``idle_seconds`` or at ``max_age_seconds`` (reading it does not
keep it alive), and a finished one is kept ``keep_seconds`` (at most ``max_games`` of
them); a game that expires or is dropped leaves the store too. A bot's attack on you stops
the bots at once: the view's ``blocking`` is true and ``prompt`` names the attacker and the
attack's value.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import FastAPI, Header, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field

from ripmarket_env.app.play_rune import (
    DEFAULT_OPPONENTS,
    RuneMarketSession,
    SetupError,
)
from ripmarket_env.app.play import KERNEL_LOCK
from ripmarket_env.app.server.answer import answer_decision
from ripmarket_env.app.server.fields import IntIn
from ripmarket_env.app.server.store import RuneGames, RuneRow, Store, token_digest
from ripmarket_env.games.runemarket.config import C_MKT

Token = Annotated[str, Header(alias="X-Seat-Token", min_length=1, max_length=64)]


def _rune_bots() -> list[str]:
    import agents

    return agents.names("rune-market")


def _create_rune_schema(schema: dict) -> None:
    """The rules between the fields, stated in the schema as the server checks them: the
    bot names, and per player count (a ``oneOf`` branch each) the seats and how many
    opponents may be named."""
    schema["properties"]["opponents"]["items"]["enum"] = _rune_bots()
    schema["oneOf"] = [
        {"properties": {"players": {"const": p}, "seat": {"maximum": p - 1}, "opponents": {"maxItems": p - 1}}}
        for p in range(2, 7)
    ]


class CreateRune(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_create_rune_schema)
    players: IntIn(2, 6) = 4
    seat: IntIn(0, 5) = 0
    opponents: list[Annotated[str, Field(max_length=40)]] = Field(default_factory=lambda: list(DEFAULT_OPPONENTS),
                                                                 min_length=1, max_length=5)
    seed: IntIn(0, 2**53 - 1) | None = None


class RuneAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: IntIn(0, 10_000)
    decision_number: IntIn(0, 10**9)


@dataclass
class _Game:
    """A game as the server holds it: its stored ``row`` always, the ``session`` once it
    is built (at creation, or on the first request after a restart); ``broken``: why the
    stored row could not be brought back."""

    row: RuneRow
    session: RuneMarketSession | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    broken: str | None = None

    @property
    def over(self) -> bool:
        return self.row.status == "over"


#: A plain-language difficulty for every Rune Market bot, from the game's leaderboard
#: (docs/games/rune-market/LEADERBOARD.md: random < the three styles < rm-search < rm-ppo-4p).
BOT_LEVELS = {
    "random": "Beginner: random moves",
    "rm-banker": "Easy: builds Shelters for interest",
    "rm-raider": "Easy: steals from the leader",
    "rm-bandit": "Easy: locks the richest Shelter",
    "rm-search": "Hard: thinks ahead",
    "rm-ppo-4p": "Hardest: trained against the others",
}
_COL = ("red", "blue")


def _number_text(v: int) -> str:
    return (f"Number {v}: pay it toward a Rune (cards totalling exactly 5, 10 or 15), a Boat Shelter or a "
            f"Bandit (21 or more) or a Bandit's removal; attack with it; or show it to block an attack of {v} "
            "or less (you keep it).")


def _card_info(db, d: int) -> dict:
    c = db.deck[d]
    return {"design": d, "name": c.name, "kind": c.kind, "value": c.value, "colour": c.colour,
            "text": c.text or _number_text(c.value)}


def _standings(s: RuneMarketSession) -> list[dict]:
    """Every seat, best first (RM-7.2: more Runes; on a tie, with the default tie-break,
    fewer turns taken): place, score, winner."""
    r, P = s.state, s.players
    scores = s.engine.scores(0)
    fewer = s.rules.tie_break == "fewer_turns"

    def better(a, b):
        return bool(scores[a] > scores[b] or (fewer and scores[a] == scores[b] and r["turns"][a] < r["turns"][b]))

    out = [{"seat": q, "name": s.label(q), "score": scores[q], "turns": int(r["turns"][q]),
            "place": 1 + sum(int(better(o, q)) for o in range(P) if o != q), "winner": bool(r["winners"][q])}
           for q in range(P)]
    return sorted(out, key=lambda e: (e["place"], e["seat"]))


def _board(s: RuneMarketSession) -> dict:
    """The table as structured data, as the person's seat may see it (RM-8.4): every
    public fact, the person's hand card by card, the other hands by their size only."""
    r, eng = s.state, s.engine
    db, cfg = eng.cards, eng.cfg
    removal = int(s.rules.bandit_removal)
    live = not s.over
    seats = []
    for q in range(s.players):
        name = s.controllers[q]
        shelters = []
        for col in range(2):
            owner = int(r["bandit"][q, col])
            shelters.append({
                "colour": _COL[col], "present": bool(r["shelter"][q, col]), "runes": int(r["inside"][q, col]),
                "boat": bool(r["boat"][q, col]),
                "bandit": None if owner < 0 else {"owner": owner, "owner_name": s.label(owner),
                                                  "paid": int(r["bandit_paid"][q, col]), "removal": removal},
            })
        seats.append({
            "seat": q, "name": s.label(q), "you": q == s.seat, "bot": None if q == s.seat else name,
            "level": "" if q == s.seat else BOT_LEVELS.get(name, "Unrated"),
            "score": int(r["loose"][q].sum() + r["inside"][q].sum()), "hand_size": int(r["hand_n"][q]),
            "loose": {"red": int(r["loose"][q, 0]), "blue": int(r["loose"][q, 1])}, "shelters": shelters,
            "acting": live and int(r["actor"]) == q, "turn_player": live and int(r["turn_player"]) == q,
            "attacked": live and bool(r["attacked"][q]), "winner": s.over and bool(r["winners"][q]),
        })
    hand = []
    for d in range(len(db.deck)):
        for _ in range(int(r["hand"][s.seat, d])):
            hand.append(_card_info(db, d))
    market = [{"id": m.id, "name": m.name, "text": m.text} for m in db.market]
    pending = None
    if live and int(r["intent"]) >= 0:
        from ripmarket_env.games.runemarket.state import INTENT_NAMES

        other = int(r["other"])
        pending = {"intent": INTENT_NAMES[int(r["intent"])], "by": s.label(int(r["turn_player"])),
                   "against": s.label(other) if other >= 0 else None,
                   "attack_value": int(r["pend_value"]) if INTENT_NAMES[int(r["intent"])] == "attack" else None,
                   "paid": int(r["pay_sum"])}
    return {
        "turn": int(r["total_turns"]),
        "market": {"red": int(r["market"][0]), "blue": int(r["market"][1]), "boats": int(r["market_boats"]),
                   "bandits": int(r["market_bandits"]), "bandits_out": int(r["removed_bandits"]),
                   "start": {"red": int(cfg[C_MKT]), "blue": int(cfg[C_MKT + 1])}, "cards": market},
        "draw_pile": int(r["deck_n"]), "discard_pile": int(r["discard_n"]),
        "seats": seats, "hand": hand, "pending": pending,
    }


def _choice_text(s: RuneMarketSession, c) -> str:
    """The choice in words, seats named instead of counted clockwise."""
    from ripmarket_env.games.runemarket.actions import decode

    kind, arg = decode(c.action)
    tp = int(s.state["turn_player"])
    if kind == "opponent":
        return s.label((tp + arg) % s.players)
    if kind == "shelter" and arg >= 2:
        return f"the {_COL[arg % 2].capitalize()} Shelter of {s.label((tp + arg // 2) % s.players)}"
    return c.text


_ASK = {
    "start": "Start of your turn: discard a Shelter from your table for a double theft, or go on to stage 2.",
    "rune_buy": "Stage 2: buy a Boat Shelter or a Bandit with {cost} Runes of one colour, or go on to stage 3.",
    "hand": "Stage 3: play a card from your hand, or end your turn.",
    "choose_card": "Which Number card?",
    "payment": "Pay with your Number cards: {paid} paid so far.",
    "choose_opponent": "Which player?",
    "choose_steal": "What do you steal from {other}?",
    "choose_shelter": "Which Shelter?",
}


def _prompt(s: RuneMarketSession) -> str:
    """What you are asked, in words: the session's block prompt, else the decision."""
    if not s.your_turn or s.blocking:
        return s.prompt()
    r = s.state
    other = int(r["other"])
    attack = int(r["intent"]) == 2  # state.I_ATTACK
    if s.phase == "choose_card":
        return ("Attack with which Number card? The defender blocks it with a card of the same value or more."
                if attack else "Pay which Number card toward the Bandit?")
    if s.phase == "choose_opponent":
        return f"Attack which player (Number {int(r['pend_value'])})?" if attack else "Steal from which player?"
    return _ASK.get(s.phase, s.prompt()).format(cost=s.rules.runes_per_item, paid=int(r["pay_sum"]),
                                                other=s.label(other) if other >= 0 else "")


def _view(game_id: str, s: RuneMarketSession) -> dict:
    result = s.result() if s.over else None
    if result is not None:
        result = {**result, "standings": _standings(s)}
    return {
        "game_id": game_id, "game": "rune-market", "seat": s.seat, "players": s.players,
        "seats": [s.label(q) for q in range(s.players)], "over": s.over, "your_turn": s.your_turn,
        "blocking": s.blocking, "phase": s.phase, "prompt": _prompt(s), "table": s.table_text(),
        "board": _board(s), "recent": s.recent(), "moves": s.recent_moves(),
        "decision_number": s.recorder.num_steps,
        "choices": [{"number": c.number, "action": c.action, "text": _choice_text(s, c)} for c in s.choices()],
        "result": result,
        "seed": s.seed if (s.over or s.practice) else None,
        "seed_text": str(s.seed) if (s.over or s.practice) else None,  # seeds are wider than a JS number
    }


def add_rune_routes(app: FastAPI, api_error, static_dir, limits, in_bot_thread, clock=None,
                    errors: dict | None = None, store: Store | None = None, warmup=None) -> None:
    """Mount the routes; ``errors``: the error responses the routes declare (the server's
    ``ERRORS``: ``{"detail": str}`` bodies); ``store``: the server's game store (default:
    one in memory); ``warmup``: the server's ``Warmup`` (a new game first waits for the
    engine and its slow bots there, so ``GET /api/status`` names what it loads)."""
    errors = errors or {}
    clock = clock or time.time
    saved = RuneGames(store if store is not None else Store(":memory:"))
    games: OrderedDict[str, _Game] = OrderedDict((r.game_id, _Game(r)) for r in saved.rows())
    guard = threading.Lock()

    def ends(g: _Game) -> float:
        """When a live game expires."""
        return min(g.row.last_action + limits.idle_seconds, g.row.created + limits.max_age_seconds)

    def drop(k: str) -> None:
        games.pop(k, None)
        saved.delete(k)

    def sweep(now: float) -> None:
        """Under ``guard``: expired live games and finished ones past ``keep_seconds`` go."""
        finished = [k for k, v in games.items() if v.over]
        for k, v in list(games.items()):
            if (v.over and now - v.row.last_action > limits.keep_seconds) or (not v.over and now >= ends(v)):
                drop(k)
        for k in finished[: max(0, len(finished) - limits.max_games)]:
            if k in games:
                drop(k)

    def refuse(live, what: str, option: str, now: float):
        wait = max(1, math.ceil(min(ends(v) for v in live) - now))
        return api_error(429, f"{what}; a slot frees up in {wait} s at the latest (ripmarket serve {option}); "
                              f"retry in {wait} s", headers={"Retry-After": str(wait)})

    def restore(game_id: str, g: _Game) -> None:
        """Under ``g.lock``: rebuild a stored game's session (after a restart)."""
        r = g.row
        if g.broken is None and r.error is not None:
            g.broken = r.error
        if g.broken is None and g.session is None:
            try:
                g.session = RuneMarketSession(r.players, r.seat, r.opponents, seed=r.seed, steps=r.steps,
                                              practice=r.practice)
            except (SetupError, ValueError, TypeError) as exc:  # bad settings or actions in the row
                g.broken = f"its stored actions do not re-play ({exc})"
        if g.broken is not None:
            raise api_error(410, f"Rune Market game {game_id[:40]!r} could not be brought back from the server's "
                                 f"store: {g.broken}; start a new game with POST /api/rune/games")

    def find(game_id: str, token: str) -> _Game:
        with guard:
            sweep(clock())
            g = games.get(game_id)
        if g is None:
            raise api_error(404, f"no Rune Market game {game_id[:40]!r} (it never existed or was removed)")
        if not secrets.compare_digest(g.row.token_hash, token_digest(token)):
            raise api_error(403, "the X-Seat-Token header does not open this game")
        return g

    @app.post("/api/rune/games", status_code=201, tags=["rune-market"], summary="Start a Rune Market game",
              responses=errors)
    async def create(body: CreateRune, request: Request) -> dict:
        client = request.client.host if request.client else "unknown"

        def run():
            now = clock()
            with guard:
                sweep(now)
                live = [v for v in games.values() if not v.over]
                mine = [v for v in live if v.row.client == client]
                if len(mine) >= limits.max_games_per_client:
                    raise refuse(mine, f"you already have {len(mine)} live Rune Market games",
                                 f"--max-games-per-client {limits.max_games_per_client}", now)
                if len(live) >= limits.max_games:
                    raise refuse(live, f"the server holds {len(live)} live Rune Market games",
                                 f"--max-games {limits.max_games}", now)
            if warmup is not None:
                warmup.prepare(body.opponents, game="rune-market")
            try:
                with KERNEL_LOCK:
                    s = RuneMarketSession(body.players, body.seat, body.opponents, seed=body.seed)
            except SetupError as exc:
                raise api_error(422, str(exc)) from None
            token = secrets.token_urlsafe(24)
            with guard:
                gid = secrets.token_urlsafe(12)
                while gid in games:  # pragma: no cover - 96 bits
                    gid = secrets.token_urlsafe(12)
                row = RuneRow(game_id=gid, token_hash=token_digest(token), client=client, players=s.players,
                              seat=s.seat, opponents=list(body.opponents), seed=s.seed, practice=s.practice,
                              steps=s.steps, status="over" if s.over else "live", created=now, last_action=now)
                saved.insert(row)
                games[gid] = _Game(row, s)
            with KERNEL_LOCK:
                return {**_view(gid, s), "seat_token": token}

        return await in_bot_thread(run)

    @app.get("/api/rune/games/{game_id}", tags=["rune-market"], summary="The game as your seat sees it",
             responses=errors)
    def get_game(game_id: str, token: Token) -> dict:
        g = find(game_id, token)
        with g.lock, KERNEL_LOCK:
            restore(game_id, g)
            return _view(game_id, g.session)

    @app.post("/api/rune/games/{game_id}/actions", tags=["rune-market"], responses=errors,
              summary="Your decision (a block included); the bots then play until your next one")
    async def act(game_id: str, body: RuneAction, token: Token) -> dict:
        def run():
            g = find(game_id, token)
            with g.lock, KERNEL_LOCK:
                restore(game_id, g)
                s = g.session
                answer_decision(s, body.decision_number, body.action, api_error)
                now = clock()  # an answered decision keeps the game alive
                saved.save(game_id, s.steps, now, s.over)
                g.row.steps, g.row.last_action, g.row.status = s.steps, now, "over" if s.over else "live"
                return _view(game_id, s)

        return await in_bot_thread(run)

    @app.get("/rune", include_in_schema=False)
    def page():
        return FileResponse(static_dir / "rune.html", media_type="text/html")
