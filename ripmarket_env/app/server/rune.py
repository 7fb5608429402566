"""The Rune Market on the web server: ``/rune`` (the page) and ``/api/rune/games``.

The same conventions as R.I.P. Market's API: the seat token travels in the
``X-Seat-Token`` header, every answer names the pending ``decision_number`` (a repeated or
stale answer is refused and changes nothing), bad requests get a one-line ``detail``.
Games live in memory under the server's limits (``Limits``, the same ``serve`` options as
R.I.P. Market's games): at most ``max_games_per_client`` live games per client and
``max_games`` in all, refused with 429 and ``Retry-After``; a live game expires when no
decision was answered for ``idle_seconds`` or at ``max_age_seconds`` (reading it does not
keep it alive), and a finished one is kept ``keep_seconds`` (at most ``max_games`` of them). A bot's attack on you stops the bots at once:
the view's ``blocking`` is true and ``prompt`` names the attacker and the attack's value.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from typing import Annotated

from fastapi import FastAPI, Header, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field

from ripmarket_env.app.play_rune import (
    DEFAULT_OPPONENTS,
    GameOverError,
    NotYourTurnError,
    RuneMarketSession,
    SetupError,
)
from ripmarket_env.app.server.fields import IntIn
from ripmarket_env.core.engine import IllegalActionError

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


def _view(game_id: str, s: RuneMarketSession) -> dict:
    return {
        "game_id": game_id, "game": "rune-market", "seat": s.seat, "players": s.players,
        "seats": [s.label(q) for q in range(s.players)], "over": s.over, "your_turn": s.your_turn,
        "blocking": s.blocking, "phase": s.phase, "prompt": s.prompt(), "table": s.table_text(),
        "recent": s.recent(), "decision_number": s.recorder.num_steps,
        "choices": [{"number": c.number, "action": c.action, "text": c.text} for c in s.choices()],
        "result": s.result() if s.over else None,
        "seed": s.seed if (s.over or s.practice) else None,
    }


def add_rune_routes(app: FastAPI, api_error, static_dir, limits, in_bot_thread, clock=None,
                    errors: dict | None = None) -> None:
    """Mount the routes; ``errors``: the error responses the routes declare (the server's
    ``ERRORS``: ``{"detail": str}`` bodies)."""
    errors = errors or {}
    clock = clock or time.time
    # game id -> (token, session, lock, client, [created, last answered])
    games: OrderedDict[str, tuple[str, RuneMarketSession, threading.Lock, str, list]] = OrderedDict()
    guard = threading.Lock()

    def ends(item) -> float:
        """When a live game expires."""
        created, last = item[4]
        return min(last + limits.idle_seconds, created + limits.max_age_seconds)

    def sweep(now: float) -> None:
        """Under ``guard``: expired live games and finished ones past ``keep_seconds`` go."""
        finished = [k for k, v in games.items() if v[1].over]
        for k, v in list(games.items()):
            if (v[1].over and now - v[4][1] > limits.keep_seconds) or (not v[1].over and now >= ends(v)):
                del games[k]
        for k in finished[: max(0, len(finished) - limits.max_games)]:
            games.pop(k, None)

    def refuse(live, what: str, option: str, now: float):
        wait = max(1, math.ceil(min(ends(v) for v in live) - now))
        return api_error(429, f"{what}; a slot frees up in {wait} s at the latest (ripmarket serve {option}); "
                              f"retry in {wait} s", headers={"Retry-After": str(wait)})

    def find(game_id: str, token: str):
        with guard:
            sweep(clock())
            item = games.get(game_id)
        if item is None:
            raise api_error(404, f"no Rune Market game {game_id[:40]!r} (it never existed or was removed)")
        if not secrets.compare_digest(item[0], token):
            raise api_error(403, "the X-Seat-Token header does not open this game")
        return item

    @app.post("/api/rune/games", status_code=201, tags=["rune-market"], summary="Start a Rune Market game",
              responses=errors)
    async def create(body: CreateRune, request: Request) -> dict:
        client = request.client.host if request.client else "unknown"

        def run():
            now = clock()
            with guard:
                sweep(now)
                live = [v for v in games.values() if not v[1].over]
                mine = [v for v in live if v[3] == client]
                if len(mine) >= limits.max_games_per_client:
                    raise refuse(mine, f"you already have {len(mine)} live Rune Market games",
                                 f"--max-games-per-client {limits.max_games_per_client}", now)
                if len(live) >= limits.max_games:
                    raise refuse(live, f"the server holds {len(live)} live Rune Market games",
                                 f"--max-games {limits.max_games}", now)
            try:
                s = RuneMarketSession(body.players, body.seat, body.opponents, seed=body.seed)
            except SetupError as exc:
                raise api_error(422, str(exc)) from None
            with guard:
                gid, token = secrets.token_urlsafe(12), secrets.token_urlsafe(24)
                games[gid] = (token, s, threading.Lock(), client, [now, now])
            return {**_view(gid, s), "seat_token": token}

        return await in_bot_thread(run)

    @app.get("/api/rune/games/{game_id}", tags=["rune-market"], summary="The game as your seat sees it",
             responses=errors)
    def get_game(game_id: str, token: Token) -> dict:
        _, s, lock, *_ = find(game_id, token)
        with lock:
            return _view(game_id, s)

    @app.post("/api/rune/games/{game_id}/actions", tags=["rune-market"], responses=errors,
              summary="Your decision (a block included); the bots then play until your next one")
    async def act(game_id: str, body: RuneAction, token: Token) -> dict:
        def run():
            _, s, lock, _client, times = find(game_id, token)
            with lock:
                if s.over:
                    raise api_error(409, "the game is over; no more actions are accepted")
                if body.decision_number != s.recorder.num_steps:
                    raise api_error(409, f"decision_number {body.decision_number} is not the pending decision "
                                         f"{s.recorder.num_steps}; GET the game and answer its decision_number. "
                                         "The game was not changed.")
                allowed = "; ".join(f"{c.action} ({c.text})" for c in s.choices())
                try:
                    s.act(body.action)
                    times[1] = clock()  # an answered decision keeps the game alive
                except (IllegalActionError, NotYourTurnError, GameOverError):
                    raise api_error(409, f"action {body.action} is not legal now (decision: {s.phase}); legal "
                                         f"actions: {allowed}. The game was not changed.") from None
                return _view(game_id, s)

        return await in_bot_thread(run)

    @app.get("/rune", include_in_schema=False)
    def page():
        return FileResponse(static_dir / "rune.html", media_type="text/html")
