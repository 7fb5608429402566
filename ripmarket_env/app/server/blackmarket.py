"""Black Market on the web server: ``/black-market`` (the page) and ``/api/black-market/games``.

The same conventions as the other games' APIs: the seat token travels in the
``X-Seat-Token`` header, every answer names the pending ``decision_number`` (a repeated or
stale answer is refused and changes nothing), bad requests get a one-line ``detail``. The
server's limits (``Limits``, the ``serve`` options) hold: at most ``max_games_per_client``
live games per client and ``max_games`` in all, refused with 429 and ``Retry-After``; a
live game expires when no decision was answered for ``idle_seconds`` or at
``max_age_seconds`` (reading does not keep it alive); a finished game is kept
``keep_seconds``.

Games outlive the process: every game is a row of the server's SQLite store
(``store.KeyedGames``, game ``"black-market"``), rewritten after every answered decision
before the answer is sent. A live row holds the settings, the seed and every seat's
actions, so a restarted server rebuilds the game exactly (re-playing them, no bot asked
again); a finished one holds its record and its final view.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Annotated, Literal

from fastapi import FastAPI, Header, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ripmarket_env.app.play_bm import (
    DEFAULT_OPPONENTS,
    PLAYER_COUNTS,
    BlackMarketSession,
    SetupError,
    bot_level,
)
from ripmarket_env.app.server.answer import answer_decision
from ripmarket_env.app.server.fields import IntIn
from ripmarket_env.app.server.store import KeyedGames, Store, token_digest

GAME = "black-market"
Token = Annotated[str, Header(alias="X-Seat-Token", min_length=1, max_length=64,
                              description="Your seat_token from POST /api/black-market/games.")]
GameId = Annotated[str, PathParam(min_length=1, max_length=64)]
#: Bots whose first game is slow (kernel compilation, torch import): the page says so.
SLOW_BOTS = ("bm-search", "bm-ppo-2p", "bm-ppo-4p-teams")


def _bots() -> list[str]:
    import agents

    return agents.names(GAME)


def _create_schema(schema: dict) -> None:
    """The rules between the fields, stated in the schema as the server checks them: the
    bot names, the player counts (BM-1.1), and per player count (a ``oneOf`` branch each)
    the seats and how many opponents may be named."""
    schema["properties"]["opponents"]["items"]["enum"] = _bots()
    schema["properties"]["players"]["enum"] = list(PLAYER_COUNTS)
    schema["oneOf"] = [  # an absent ``players`` is the default 4: only that branch may then hold
        {"properties": {"players": {"const": p}, "seat": {"maximum": p - 1}, "opponents": {"maxItems": p - 1}},
         **({} if p == 4 else {"required": ["players"]})}
        for p in PLAYER_COUNTS
    ]


class CreateBlackMarket(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_create_schema)
    players: IntIn(2, 6) = Field(4, description="2, 4 or 6 (two equal sides, BM-1.1).")
    seat: IntIn(0, 5) = Field(0, description="Your seat, 0 to players-1; side A = even seats, B = odd (BM-1.2).")
    mode: Literal["teams", "ffa"] = Field("teams", description="teams (a side wins together) or ffa (BM-1.3, BM-1.4).")
    opponents: list[Annotated[str, Field(max_length=40)]] = Field(
        default_factory=lambda: list(DEFAULT_OPPONENTS), min_length=1, max_length=5,
        description="Bot names for the other seats (teammates included) in seat order; a shorter list is repeated. "
                    "Default: bm-builder, bm-denier, bm-rusher (as many as there are other seats).")
    seed: IntIn(0, 2**53 - 1) | None = Field(None, description="A chosen seed makes a practice game.")


class BlackMarketAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: IntIn(0, 10_000) = Field(..., description="The action of one of the view's choices.")
    decision_number: IntIn(0, 10**9) = Field(..., description="The view's decision_number.")


class _Ndjson(PlainTextResponse):
    """A game record: JSON lines."""

    media_type = "application/x-ndjson"


@dataclass
class _Game:
    data: dict  # what the store keeps (settings, token digest, steps, times)
    session: BlackMarketSession | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class BlackMarketGames:
    """The live games in memory (rebuilt from the store on first use after a restart),
    finished and expired ones in the store only."""

    def __init__(self, store: Store, limits, clock=time.time):
        self.table = KeyedGames(store, GAME)
        self.limits, self.clock = limits, clock
        self.live = {gid: _Game(data) for gid, data in self.table.live().items()}
        self.guard = threading.Lock()
        self.reserved: dict[str, int] = {}
        self.loaded: set[str] = set()  # the engine ("engine") and the bots used so far
        self._purged = -math.inf
        self.warmup = None  # the server's Warmup, when the routes are given one

    def ends(self, g: _Game) -> float:
        return min(g.data["last_action"] + self.limits.idle_seconds, g.data["created"] + self.limits.max_age_seconds)

    def _expire(self, gid: str, g: _Game, now: float, reason: str) -> None:
        self.live.pop(gid, None)
        g.session = None
        g.data["end_reason"] = reason
        self.table.put(gid, "expired", now, g.data)

    def sweep(self, now: float) -> None:
        """Under ``guard``: expired live games leave; old finished rows are purged."""
        lim = self.limits
        for gid, g in list(self.live.items()):
            if now - g.data["last_action"] >= lim.idle_seconds:
                self._expire(gid, g, now, f"no decision was answered for {lim.idle_seconds:g} s "
                                          f"(ripmarket serve --idle-timeout {lim.idle_seconds:g})")
            elif now - g.data["created"] >= lim.max_age_seconds:
                self._expire(gid, g, now, f"it reached the maximum game age of {lim.max_age_seconds:g} s "
                                          f"(ripmarket serve --max-game-age {lim.max_age_seconds:g})")
        if now - self._purged > 60:
            self._purged = now
            self.table.purge(now - lim.keep_seconds)

    def status(self, opponents=()) -> dict:
        w = self.warmup
        if w is not None:  # what the server's warm-up loaded counts too
            self.loaded.update(p for p in ("engine", *SLOW_BOTS) if w.is_ready("black-market engine" if p == "engine" else p))
        slow = [b for b in dict.fromkeys(opponents) if b in SLOW_BOTS and b not in self.loaded]
        if "engine" not in self.loaded:
            stage = "Loading the Black Market engine (compiling it after an install takes up to a minute)"
        elif slow:
            stage = f"Loading the {slow[0]} bot (its first game takes a few seconds more)"
        else:
            stage = None
        return {"ready": stage is None, "stage": stage}


def _view(gid: str, s: BlackMarketSession) -> dict:
    return {"game_id": gid, **s.view()}


def add_black_market_routes(app: FastAPI, api_error, static_dir, limits, in_bot_thread, store: Store,
                            clock=None, errors: dict | None = None, warm_up: bool = False,
                            warmup=None) -> BlackMarketGames:
    """Mount the routes; ``errors``: the error responses the routes declare (``{"detail": str}``);
    ``warmup``: the server's ``Warmup``, which loads the engine and the slow bots (a new
    game waits there for what it needs; ``warm_up`` then starts no thread of its own)."""
    errors = dict(errors or {})
    if 404 in errors:  # an expired game answers 410, with the same body
        errors[410] = errors[404]
    games = BlackMarketGames(store, limits, clock or time.time)
    games.warmup = warmup
    app.state.black_market = games
    tags = ["black-market"]

    def refuse(live, what: str, option: str, now: float):
        wait = max(1, math.ceil(min(games.ends(g) for g in live) - now))
        return api_error(429, f"{what}; a slot frees up in {wait} s at the latest (ripmarket serve {option}); "
                              f"retry in {wait} s", headers={"Retry-After": str(wait)})

    def new_session(**kw) -> BlackMarketSession:
        if warmup is not None:
            warmup.prepare(kw.get("opponents", ()), game=GAME)
        s = BlackMarketSession(**kw)
        games.loaded.update(["engine", *s.controllers])
        return s

    def find(gid: str, token: str) -> tuple[str, _Game]:
        """(status, game) if ``token`` opens it; a live game comes with its session."""
        now = games.clock()
        with games.guard:
            games.sweep(now)
            g = games.live.get(gid)
        if g is None:
            row = games.table.get(gid)
            if row is None:
                raise api_error(404, f"no Black Market game {gid[:40]!r} (it never existed, or it ended more than "
                                     f"{limits.keep_seconds:g} s ago); create one with POST /api/black-market/games")
            status, data = row
            g = _Game(data)
        else:
            status = "live"
        if not secrets.compare_digest(token_digest(token), g.data["token_hash"]):
            raise api_error(403, "the X-Seat-Token header does not open this game; send the seat_token that "
                                 "POST /api/black-market/games returned")
        if status == "expired":
            raise api_error(410, f"Black Market game {gid!r} has expired: {g.data.get('end_reason')}; "
                                 "start a new one with POST /api/black-market/games")
        if status == "live" and g.session is None:
            with g.lock:
                if g.session is None:
                    d = g.data
                    try:
                        g.session = new_session(players=d["players"], seat=d["seat"], mode=d["mode"],
                                                opponents=d["opponents"], seed=int(d["seed"]), steps=d["steps"],
                                                practice=d["practice"])
                    except (SetupError, KeyError, TypeError, ValueError) as exc:
                        with games.guard:
                            games._expire(gid, g, now, f"it could not be brought back after a restart ({exc})")
                        raise api_error(410, f"Black Market game {gid!r} could not be brought back after a "
                                             f"restart ({exc}); start a new one") from None
        return status, g

    @app.get("/api/black-market/status", tags=tags, summary="Whether the engine and the slow bots are loaded")
    def bm_status(bots: str = "") -> dict:
        return games.status([b for b in bots.split(",") if b][:6])

    @app.post("/api/black-market/games", status_code=201, tags=tags, summary="Start a Black Market game",
              responses=errors)
    async def create(body: CreateBlackMarket, request: Request) -> dict:
        client = request.client.host if request.client else "unknown"
        if body.players not in PLAYER_COUNTS:
            raise api_error(422, f"players: {body.players} is not allowed; allowed: 2, 4 or 6 (two equal sides, BM-1.1)")
        if body.seat >= body.players:
            raise api_error(422, f"seat: {body.seat} is not a seat of a {body.players}-player game; "
                                 f"allowed: 0 to {body.players - 1}")
        if "opponents" not in body.model_fields_set:  # the default bots, as many as there are other seats
            body.opponents = list(DEFAULT_OPPONENTS[: body.players - 1])
        if len(body.opponents) > body.players - 1:
            raise api_error(422, f"opponents: {len(body.opponents)} bots named for {body.players - 1} other seat(s); "
                                 f"allowed: 1 to {body.players - 1} names")
        known = _bots()
        bad = [n for n in body.opponents if n not in known]
        if bad:
            raise api_error(422, f"opponents: unknown bot {bad[0]!r} for Black Market; allowed: {', '.join(known)}")

        def run():
            now = games.clock()
            with games.guard:
                games.sweep(now)
                live = list(games.live.values())
                mine = [g for g in live if g.data["client"] == client]
                if len(mine) + games.reserved.get(client, 0) >= limits.max_games_per_client:
                    raise refuse(mine or live, f"you already have {len(mine)} live Black Market games",
                                 f"--max-games-per-client {limits.max_games_per_client}", now)
                if len(live) + sum(games.reserved.values()) >= limits.max_games:
                    raise refuse(live, f"the server holds {len(live)} live Black Market games",
                                 f"--max-games {limits.max_games}", now)
                games.reserved[client] = games.reserved.get(client, 0) + 1
            try:
                try:
                    s = new_session(players=body.players, seat=body.seat, mode=body.mode, opponents=body.opponents,
                                    seed=body.seed)
                except SetupError as exc:
                    raise api_error(422, str(exc)) from None
                token = secrets.token_urlsafe(24)
                data = {"token_hash": token_digest(token), "client": client, "players": s.players, "seat": s.seat,
                        "mode": s.mode, "opponents": list(body.opponents), "seed": str(s.seed),
                        "practice": s.practice, "steps": s.steps, "created": now, "last_action": now}
                with games.guard:
                    gid = secrets.token_urlsafe(12)
                    g = _Game(data, s)
                    games.table.put(gid, "live", now, data)
                    games.live[gid] = g
                return {**_view(gid, s), "seat_token": token}
            finally:
                with games.guard:
                    games.reserved[client] -= 1
                    if not games.reserved[client]:
                        del games.reserved[client]

        return await in_bot_thread(run)

    @app.get("/api/black-market/games/{game_id}", tags=tags, summary="The game as your seat sees it",
             responses=errors)
    def read_game(game_id: GameId, token: Token) -> dict:
        status, g = find(game_id, token)
        if status != "live":
            return dict(g.data["final_view"])
        with g.lock:
            return _view(game_id, g.session)

    @app.post("/api/black-market/games/{game_id}/actions", tags=tags, responses=errors,
              summary="Your decision; the bots then play until your next one")
    async def act(game_id: GameId, body: BlackMarketAction, token: Token) -> dict:
        def run():
            status, g = find(game_id, token)
            if status != "live":
                raise api_error(409, "the game is over; no more actions are accepted "
                                     f"(GET /api/black-market/games/{game_id}/record for its record)")
            with g.lock:
                s = g.session
                answer_decision(s, body.decision_number, body.action, api_error)
                now = games.clock()
                out = _view(game_id, s)
                g.data.update(steps=s.steps, last_action=now)
                if s.over:
                    g.data.update(record=s.record_text(), final_view=out, end_reason="finished")
                    games.table.put(game_id, "over", now, g.data)
                    with games.guard:
                        games.live.pop(game_id, None)
                else:
                    games.table.put(game_id, "live", now, g.data)
                return out

        return await in_bot_thread(run)

    # A route whose success is not JSON names application/json for its errors itself.
    as_json = {k: {"description": "Error", "content": {"application/json": {"schema": {
        "$ref": "#/components/schemas/Problem"}}}} for k in errors}

    @app.get("/api/black-market/games/{game_id}/record", tags=tags, response_class=_Ndjson,
             responses=as_json, summary="The game record (JSON lines) of a finished game")
    def record(game_id: GameId, token: Token):
        status, g = find(game_id, token)
        if status != "over":
            raise api_error(409, "the game is not over yet: its record shows every hand, so it is available "
                                 "once the game has ended")
        return _Ndjson(g.data["record"], headers={
            "Content-Disposition": f'attachment; filename="black-market-{game_id}.jsonl"'})

    @app.delete("/api/black-market/games/{game_id}", status_code=204, tags=tags, responses=errors,
                summary="Drop a game")
    def delete(game_id: GameId, token: Token):
        try:
            find(game_id, token)
        except Exception as exc:  # an expired game may be dropped too
            if getattr(exc, "status", None) != 410:
                raise
        with games.guard:
            games.live.pop(game_id, None)
            games.table.delete(game_id)
        return Response(status_code=204)

    @app.get("/api/black-market/bots", tags=tags, summary="The Black Market bots with a difficulty label")
    def bots() -> dict:
        import agents

        return {"bots": [{"name": n, "description": agents.describe(n, GAME), "level": bot_level(n)}
                         for n in _bots()], "default": list(DEFAULT_OPPONENTS)}

    @app.get("/black-market", include_in_schema=False)
    def page():
        return FileResponse(static_dir / "blackmarket.html", media_type="text/html")

    if warm_up and warmup is None:
        def warm():
            try:
                new_session(players=2, seat=0, mode="teams", opponents=["random"], seed=0)
            except Exception:  # pragma: no cover - a broken install; the first game reports it
                pass

        threading.Thread(target=warm, name="black-market-warmup", daemon=True).start()
    return games
