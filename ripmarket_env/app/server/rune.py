"""The Rune Market on the web server: ``/rune`` (the page) and ``/api/rune/games``.

The same conventions as R.I.P. Market's API: the seat token travels in the
``X-Seat-Token`` header, every answer names the pending ``decision_number`` (a repeated or
stale answer is refused and changes nothing), bad requests get a one-line ``detail``.
Games live in memory (at most ``max_games``; the oldest finished one makes room, and
otherwise a new game is refused with 503). A bot's attack on you stops the bots at once:
the view's ``blocking`` is true and ``prompt`` names the attacker and the attack's value.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Annotated

from fastapi import FastAPI, Header
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field

from ripmarket_env.app.play_rune import (
    DEFAULT_OPPONENTS,
    GameOverError,
    NotYourTurnError,
    RuneMarketSession,
    SetupError,
)
from ripmarket_env.core.engine import IllegalActionError

Token = Annotated[str, Header(alias="X-Seat-Token", min_length=1, max_length=64)]


class CreateRune(BaseModel):
    model_config = ConfigDict(extra="forbid")
    players: int = Field(4, ge=2, le=6)
    seat: int = Field(0, ge=0, le=5)
    opponents: list[Annotated[str, Field(max_length=40)]] = Field(default_factory=lambda: list(DEFAULT_OPPONENTS),
                                                                 min_length=1, max_length=5)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)


class RuneAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: int = Field(ge=0, le=10_000)
    decision_number: int = Field(ge=0)


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


def add_rune_routes(app: FastAPI, api_error, static_dir, max_games: int, in_bot_thread) -> None:
    games: OrderedDict[str, tuple[str, RuneMarketSession, threading.Lock]] = OrderedDict()
    guard = threading.Lock()

    def find(game_id: str, token: str):
        item = games.get(game_id)
        if item is None:
            raise api_error(404, f"no Rune Market game {game_id[:40]!r} (it never existed or was removed)")
        if not secrets.compare_digest(item[0], token):
            raise api_error(403, "the X-Seat-Token header does not open this game")
        return item

    @app.post("/api/rune/games", status_code=201, tags=["rune-market"], summary="Start a Rune Market game")
    async def create(body: CreateRune) -> dict:
        def run():
            try:
                s = RuneMarketSession(body.players, body.seat, body.opponents, seed=body.seed)
            except SetupError as exc:
                raise api_error(422, str(exc)) from None
            with guard:
                if len(games) >= max_games:
                    done = next((k for k, v in games.items() if v[1].over), None)
                    if done is None:
                        raise api_error(503, f"the server holds {max_games} live Rune Market games; try later")
                    del games[done]
                gid, token = secrets.token_urlsafe(12), secrets.token_urlsafe(24)
                games[gid] = (token, s, threading.Lock())
            return {**_view(gid, s), "seat_token": token}

        return await in_bot_thread(run)

    @app.get("/api/rune/games/{game_id}", tags=["rune-market"], summary="The game as your seat sees it")
    def get_game(game_id: str, token: Token) -> dict:
        _, s, lock = find(game_id, token)
        with lock:
            return _view(game_id, s)

    @app.post("/api/rune/games/{game_id}/actions", tags=["rune-market"],
              summary="Your decision (a block included); the bots then play until your next one")
    async def act(game_id: str, body: RuneAction, token: Token) -> dict:
        def run():
            _, s, lock = find(game_id, token)
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
                except (IllegalActionError, NotYourTurnError, GameOverError):
                    raise api_error(409, f"action {body.action} is not legal now (decision: {s.phase}); legal "
                                         f"actions: {allowed}. The game was not changed.") from None
                return _view(game_id, s)

        return await in_bot_thread(run)

    @app.get("/rune", include_in_schema=False)
    def page():
        return FileResponse(static_dir / "rune.html", media_type="text/html")
