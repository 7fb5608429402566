"""The FastAPI app: the JSON API for playing against the bots, and the web page.

``create_app()`` builds it; ``ripmarket serve`` runs it with uvicorn. docs/SERVER.md
describes the security model and the limits.

API (OpenAPI schema at ``/openapi.json``, browsable at ``/docs``). A game's seat token
travels in the ``X-Seat-Token`` header, never in a URL:

* ``POST /api/games`` — a new game: ``{players, seat, opponents[], seed?, rules?}``
  (``rules``: the rule variants of ``RulesConfig`` but ``num_players``, docs/SERVER.md);
  returns the game as your seat sees it plus ``game_id`` and ``seat_token``. Without a
  seed the game gets a secret one, shown once the game is over; a chosen seed makes a
  practice game (``practice: true`` in its view and record).
* ``GET /api/games/{id}`` — the game from your seat's point of view: the table, your
  hand with card texts, legal actions with descriptions, ``decision_number``, this
  round's log, the round summaries and the result once it is over. Never another
  seat's hidden cards, nor the seed of a running game that was not chosen.
* ``POST /api/games/{id}/actions`` ``{action, decision_number}`` — your decision, naming
  the decision it answers (a repeated or stale answer gets 409); the bots then play
  until your next decision or the end of the game.
* ``GET /api/games/{id}/record`` — the game record (JSON lines, replayable with
  ``ripmarket replay``) once the game is over; it shows every hand, so not before.
* ``DELETE /api/games/{id}`` — drop a game.
* ``GET /api/bots`` — the bots that can play the cards in play (with a plain difficulty
  label), the registered ones that cannot (``unavailable``, with the reason: the first
  edition's ``ppo-6p`` stages), the observation size and the number of actions.
* ``GET /api/status`` — whether the engine and the slow bots are loaded, and what is
  loading now (the page shows it while a first game is being set up).
* ``POST /api/bots/{name}/act`` ``{observation, action_mask}`` — one stateless bot decision
  (409 naming both card databases for a trained bot of other cards, e.g. ``ppo-6p-stage1``).

Errors are JSON ``{"detail": "<what was wrong and what is allowed>"}`` with a 4xx status;
a request that fails changes no game. Too many games answer 429 with ``Retry-After``.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import anyio
import numpy as np
from fastapi import FastAPI, Header, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict as StrictValue, StrictBool, StrictFloat
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from ripmarket_env.games.ripmarket.config import (
    DEFLECT_TARGETS, GHOST_PHASES, NO_SURVIVOR, OPENING_BONUS, REWARD_MODES, TIE_RULES, TOKEN_TIES,
)
from ripmarket_env.games.ripmarket.engine import IllegalActionError
from ripmarket_env.app.play import (
    KERNEL_LOCK, GameOverError, NotYourTurnError, SetupError, agent_registry, default_opponents, playable_bots, unavailable_bots,
)
from ripmarket_env.app.server.games import BadToken, GameGone, GameManager, Limits, TooManyGames, UnknownGame
from ripmarket_env.app.server.store import Store

STATIC = Path(__file__).parent / "static"


#: Host names the server answers to by default (the Host header is checked against
#: them: a page on another site cannot reach the server through DNS rebinding).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: Largest request body accepted (bytes): a bot request's observation fits in about 25 kB.
MAX_BODY_BYTES = 64 * 1024
#: Longest piece of a request echoed back in an error message (characters).
MAX_ECHO = 60
SEAT_TOKEN_HEADER = "X-Seat-Token"

log = logging.getLogger("ripmarket.server")


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _short(x: Any) -> str:
    """``repr(x)``, cut to ``MAX_ECHO`` characters: an error never echoes a whole input."""
    text = repr(x)
    return text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + f"... ({len(text):,} characters)"


# ------------------------------------------------------------------------------ models
from ripmarket_env.app.server.fields import Int, IntIn  # noqa: E402,F401  (integer fields of the schema)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RulesIn(Strict):
    """Rule variants (docs/RULES.md, "Rule variants"); omitted fields keep the rulebook's values."""

    start_hp: Optional[IntIn(1, 9)] = Field(None, description="1-9; default 3 for 2-3 players, 2 for 4-10")
    market_size: Optional[IntIn(1, 4)] = Field(None, description="1-4; default 3 for 2-6 players, 4 for 7-10")
    ghost_cap: Optional[IntIn(1, 5)] = Field(None, description="1-5; default 2 for 2-6 players, 3 for 7-10")
    tie_rule: Optional[Literal[TIE_RULES]] = Field(None, description="who of the tied lowest takes damage "
                                                   "(R-8.2): all (default) or earliest")
    epilogue: Optional[StrictBool] = Field(None, description="2-player haunting epilogue (2 players only)")
    ghost_phase: Optional[Literal[GHOST_PHASES]] = Field(None, description=(
        "when the Ghosts act (R-3.3): first (default) or in_turn (first edition)"))
    max_rounds: Optional[IntIn(1, 1000)] = Field(None, description="1-1000; default 3 x players x start HP")
    reward_mode: Optional[Literal[REWARD_MODES]] = None
    hand_size: Optional[IntIn(1, 6)] = Field(None, description="1-6; default 3")
    no_survivor: Optional[Literal[NO_SURVIVOR]] = Field(None, description=(
        "round damage that would leave nobody alive (R-9.2): sudden_death (default) or share_win (first edition)"))
    deflect_target: Optional[Literal[DEFLECT_TARGETS]] = Field(None, description=(
        "whom a Deflection may name (R-8.3): stronger (default), not_weaker or any (first edition)"))
    opening_bonus: Optional[Literal[OPENING_BONUS]] = Field(None, description=(
        "who draws one more card at setup (R-1.3): none (default, the first edition too), first_half or first_player"))
    token_tie: Optional[Literal[TOKEN_TIES]] = Field(None, description=(
        "who of the tied takes the First Player token (R-8.6): latest (default) or earliest (first edition)"))
    grace_round: Optional[StrictBool] = Field(None, description=(
        "the first round deals no round damage (R-8.2): true (default) or false (first edition)"))


class CreateGame(Strict):
    players: IntIn(2, 10) = Field(..., description="Seats at the table, 2-10.")
    seat: IntIn(0, 9) = Field(0, description="Your seat, 0 to players-1.")
    opponents: list[Annotated[str, Field(min_length=1, max_length=40)]] = Field(
        ..., min_length=1, max_length=9,
        description="Bot names (GET /api/bots) for the other seats in seat order; a shorter list is repeated.",
    )
    seed: Optional[IntIn(0, 2**53 - 1)] = Field(None,
        description="Omit it for a real game: the server then draws a secret seed, shown once the game is over. "
                    "A chosen seed makes a practice game (its deal can be known in advance): practice is true "
                    "in its view and its record.")
    rules: Optional[RulesIn] = None

    model_config = ConfigDict(extra="forbid", json_schema_extra=lambda schema: _create_game_schema(schema))


def _create_game_schema(schema: dict) -> None:
    """The rules between ``CreateGame``'s fields, stated in its schema: the bot names,
    and for each player count (one ``oneOf`` branch each) the seats, how many opponents
    may be named, and that ``rules.epilogue`` is true only in a 2-player game. The server
    checks the same rules and answers 422 with a message when they are broken."""
    schema["examples"] = [{"players": 4, "seat": 0, "opponents": ["greedy", "survivor", "shark"]}]
    schema["properties"]["opponents"]["items"]["enum"] = playable_bots()
    schema["oneOf"] = [
        {"properties": {
            "players": {"const": p},
            "seat": {"maximum": p - 1},
            "opponents": {"maxItems": p - 1},
            **({} if p == 2 else {"rules": {"properties": {"epilogue": {"enum": [False, None]}}}}),
        }}
        for p in range(2, 11)
    ]


class ActionIn(Strict):
    action: IntIn(0, 10_000) = Field(..., description="One of the legal_actions' action numbers.")
    decision_number: IntIn(0, 10**9) = Field(...,
        description="The decision_number of the view this answers: an answer to a decision already taken "
                    "(a repeated or stale request) is refused with 409.")


def _bot_act_model(low: np.ndarray, high: np.ndarray, num_actions: int):
    """``BotActIn`` with the schema stating the observation space: the exact lengths and
    every feature's bounds (``prefixItems``)."""
    n = int(low.size)
    obs_schema = {
        "type": "array", "minItems": n, "maxItems": n, "items": False,
        "prefixItems": [{"type": "number", "minimum": float(lo), "maximum": float(hi)}
                        for lo, hi in zip(low.tolist(), high.tolist())],
    }
    mask_schema = {
        "type": "array", "minItems": num_actions, "maxItems": num_actions,
        "items": {"enum": [0, 1, False, True]}, "contains": {"enum": [1, True]},
    }

    class BotActIn(Strict):
        observation: list[StrictFloat | Int] = Field(
            ..., json_schema_extra=obs_schema,
            description=f"The seat's observation vector: exactly {n} finite numbers, each within its "
                        "feature's bounds (the env's observation space; GET /api/bots gives the size).")
        action_mask: list[Int | StrictBool] = Field(
            ..., json_schema_extra=mask_schema,
            description=f"Exactly {num_actions} values, 1 (or true) for each legal action, 0 (or false) "
                        "otherwise; at least one 1.")
        seed: Optional[IntIn(0, 2**53 - 1)] = Field(None, description="Seed of the bot's own RNG (default 0).")

    return BotActIn


class Card(BaseModel):
    design: int
    name: str
    value: int
    text: str
    family: str
    keywords: list[str]
    face_down: bool = Field(description="The card is played face-down.")


class HandCard(Card):
    count: int
    action: Optional[int] = Field(description="The action that plays (or picks) this card now; null if not legal.")


class ShadowCard(BaseModel):
    design: int
    name: str
    text: str
    counterplay: str
    family: str


class ShadowHandCard(ShadowCard):
    count: int
    action: Optional[int]


class Played(BaseModel):
    card: Optional[Card] = Field(description="null while another seat's card is face-down")
    face_down: bool


class SeatOut(BaseModel):
    seat: int
    name: str
    controller: str = Field(description='"you" or the bot\'s name')
    level: str = Field("", description="The bot's difficulty in plain words (empty for you).")
    is_you: bool
    hp: int
    max_hp: int
    alive: bool
    hand_count: int
    shadow_count: int
    took: Optional[Literal["deck", "market"]]
    took_card: Optional[Card]
    played: Optional[Played]
    target: Optional[int]
    haunted_by: list[ShadowCard]
    first_player: bool
    deciding: bool
    has_acted: bool
    target_action: Optional[int] = Field(description="The action that chooses this seat now; null if not legal.")


class MarketSlot(BaseModel):
    slot: int
    card: Optional[Card]
    action: Optional[int]


class Table(BaseModel):
    rule: str
    living_deck: int
    living_discard: int
    shadow_deck: int
    shadow_discard: int
    market: list[MarketSlot]
    first_player: int
    epilogue: bool
    deck_action: Optional[int]
    pass_action: Optional[int]
    seats: list[SeatOut]


class LegalAction(BaseModel):
    action: int
    kind: str
    label: str = Field(description="The action table's description (ActionTable.describe).")
    text: str = Field(description="What the action does here, in the game's words.")


class LogEntry(BaseModel):
    round: int
    seat: int = Field(description="The seat the entry is about; -1 for the whole table.")
    text: str = Field(description="What happened, as your seat may see it (R-12.3).")
    forced: bool = Field(description="Your own decision, taken by the engine as the only legal option (R-12.1); "
                                    "always false for another seat's, which reads like a chosen one (R-12.3).")
    kind: str = Field(description="An event kind of the engine's event log (ripmarket_env.games.ripmarket.events: "
                                  "play, reveal, score, damage, death, haunt, ...) or note.")


class RoundSeat(BaseModel):
    seat: int
    name: str
    card: Optional[Card]
    revealed: Optional[bool]
    target: Optional[int]
    haunted_by: list[str]
    competed: bool
    score: Optional[int]
    damage: int
    hp_lost: int = Field(0, description="Every HP lost this round: round damage, direct damage (Backstab, ...).")
    hp: int
    alive: bool
    died: bool


class StoryLine(BaseModel):
    seat: int = Field(description="The seat the sentence is about; -1 for the whole table.")
    kind: str = Field(description="scores, damage, deflect, hit, sudden_death, grace, haunt or death")
    text: str


class RoundOut(BaseModel):
    round: int
    rule: str
    rule_card: Optional[str] = Field(None, description="The card that set the round's rule (e.g. Aftershock).")
    rule_text: str = Field("", description="The rule named by its card, with what it does.")
    story: list[StoryLine] = Field(default_factory=list, description="Why the round ended as it did, in words.")
    epilogue: bool
    first_player: int
    seats: list[RoundSeat]
    events: list[LogEntry]


class Decision(BaseModel):
    seat: int
    name: str
    controller: str
    phase: str
    prompt: str


class Standing(BaseModel):
    seat: int
    name: str
    controller: str
    level: str
    place: float
    place_text: str
    winner: bool
    alive: bool
    hp: int
    died_round: Optional[int]
    how: Optional[str] = Field(description="How the player lost their last HP, in words.")


class Result(BaseModel):
    winners: list[int]
    rewards: list[float]
    you_won: bool
    your_reward: float
    rounds: int
    end: str = Field("", description="Why the game ended, in words.")
    standings: list[Standing] = Field(default_factory=list, description="Best place first.")


class RecentItem(BaseModel):
    type: Literal["event", "round", "result"]
    round: Optional[int] = None
    seat: Optional[int] = None
    text: Optional[str] = None
    forced: Optional[bool] = None
    kind: Optional[str] = None
    index: Optional[int] = Field(None, description="For a round: its index in rounds.")


class ActiveRule(BaseModel):
    name: str
    card: Optional[str]
    text: str


class GameView(BaseModel):
    game_id: str
    seat: int
    players: int
    seed: Optional[int] = Field(description="The game's seed: null while a game with a secret seed runs; "
                                            "shown once it is over, and always in a practice game.")
    practice: bool = Field(description="The seed was chosen by the client: a practice game.")
    decision_number: int = Field(description="Number of the pending decision; send it with your action.")
    controllers: list[str]
    rules: dict[str, Any]
    round: int
    status: Literal["your_turn", "waiting", "over"]
    decision: Optional[Decision]
    table: Table
    hand: list[HandCard]
    shadow_hand: list[ShadowHandCard]
    legal_actions: list[LegalAction]
    log: list[LogEntry] = Field(description="This round so far, as your seat saw it.")
    rounds: list[RoundOut] = Field(description="Every resolved round: cards, scores, damage, HP, and its log.")
    recent: list[RecentItem] = Field(default_factory=list,
                                     description="What happened since your latest decision, in order.")
    active_rule: Optional[ActiveRule] = None
    result: Optional[Result]


class GameCreated(GameView):
    seat_token: str = Field(description="Send it with every request for this game; it is your seat's key.")


class BotInfo(BaseModel):
    name: str
    description: str
    level: str = ""


class StatusPart(BaseModel):
    name: str = Field(description="The part: `engine` (R.I.P. Market's), `rune-market engine`, `black-market engine` "
                                  "or a bot's name.")
    game: Literal["ripmarket", "rune-market", "black-market"]
    what: str = Field(description="The part in words, naming its game.")
    ready: bool


class StatusOut(BaseModel):
    ready: bool = Field(description="Nothing is loading and the asked game's engine (and the bots named) is ready.")
    stage: Optional[str] = Field(description="What is loading now, in words; null when idle.")
    done: int
    total: int
    elapsed: float
    error: Optional[str]
    parts: list[StatusPart] = Field(description="Every part the warm-up loads, in its order: the three games' "
                                                "engines, then the slow bots.")


class UnavailableBot(BaseModel):
    name: str
    description: str
    reason: str = Field(description="Why it cannot play the cards in play (a trained bot of other cards).")


class BotsOut(BaseModel):
    bots: list[BotInfo] = Field(description="The bots that can play the cards in play: the names a game may seat.")
    unavailable: list[UnavailableBot] = Field(default_factory=list, description=(
        "Registered bots that cannot play the cards in play (e.g. the first edition's ppo-6p stages), "
        "with the reason; a game refuses them (422), the bot endpoint too (409)."))
    default_opponents: list[str] = Field(default_factory=list, description=(
        "The bots a new game's setup offers first, repeated round the table: the trained bot for every "
        "table (ppo), or the heuristics where it cannot play the cards in play."))
    observation_size: int
    num_actions: int


class BotActOut(BaseModel):
    action: int
    description: str


class Problem(BaseModel):
    detail: str


ERRORS = {
    400: {"model": Problem}, 403: {"model": Problem}, 404: {"model": Problem},
    409: {"model": Problem}, 413: {"model": Problem}, 422: {"model": Problem}, 429: {"model": Problem},
}
#: The same answers for a route whose success is not JSON: FastAPI files a ``model``'s
#: schema under the route's own media type, so these name application/json themselves.
ERRORS_AS_JSON = {
    status: {"description": "Error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    for status in ERRORS
}


class NdjsonResponse(PlainTextResponse):
    """A game record: JSON lines."""

    media_type = "application/x-ndjson"


# ------------------------------------------------------------------------------ errors
_SHAPES = {
    "create": '{"players": 2-10, "seat": 0..players-1, "opponents": ["greedy", ...], "seed": optional integer 0..2**53-1 '
              '(makes a practice game), "rules": optional object}',
    "action": '{"action": <integer from legal_actions>, "decision_number": <the view\'s decision_number>} '
              '(and the seat token in the X-Seat-Token header)',
    "bot": '{"observation": [<observation_size> numbers], "action_mask": [<num_actions> values 0 or 1]}',
}


def _where(loc: tuple) -> str:
    parts = [str(x) for x in loc if x not in ("body",)]
    for kind in ("query", "path", "header"):
        if loc and loc[0] == kind:
            return f"{kind} parameter {_short(parts[1])}" if len(parts) > 1 else kind
    return _short(".".join(parts))[1:-1] if parts else "the request body"


def _validation_message(request: Request, errors: list[dict]) -> str:
    out = []
    for e in errors[:5]:
        where = _where(tuple(e.get("loc", ())))
        typ = e.get("type", "")
        msg = e.get("msg", "invalid")
        if typ == "json_invalid":
            out.append(f"the request body is not valid JSON ({e.get('ctx', {}).get('error', msg)})")
            continue
        if typ == "extra_forbidden":
            out.append(f"{where}: unknown field")
            continue
        if typ == "missing":
            out.append(f"{where}: required but missing")
            continue
        got = e.get("input")
        got_txt = ""
        if got is not None and not isinstance(got, (dict, list)):
            got_txt = f" (got {_short(got)})"
        elif isinstance(got, (dict, list)):
            got_txt = f" (got a JSON {'object' if isinstance(got, dict) else 'array'})"
        msg = msg[:200]
        out.append(f"{where}: {msg[0].lower() + msg[1:] if msg else msg}{got_txt}")
    if len(errors) > 5:
        out.append(f"and {len(errors) - 5} more")
    path = request.url.path
    shape = _SHAPES["bot"] if path.startswith("/api/bots") else (
        _SHAPES["action"] if path.endswith("/actions") else _SHAPES["create"] if path == "/api/games" else None)
    text = "invalid request: " + "; ".join(out)
    if shape and request.method == "POST":
        text += f". Expected a JSON object {shape}"
    return text


# ------------------------------------------------------------------------------ guard
def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware in front of the app: the Host header must name this server
    (DNS rebinding), seat tokens must not travel in URLs, and request bodies are cut
    off at ``max_body`` bytes (413) before anything parses them."""

    def __init__(self, app, allowed_hosts: Sequence[str] | None, max_body: int):
        self.app = app
        self.allowed = None if allowed_hosts is None else {_host_name(h) for h in allowed_hosts}
        self.max_body = int(max_body)

    @staticmethod
    async def _answer(send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if self.allowed is not None:
            host = headers.get(b"host", b"").decode("latin-1")
            if _host_name(host) not in self.allowed:
                return await self._answer(
                    send, 400, f"the Host header {_short(host)} is not a name of this server; allowed: "
                               f"{', '.join(sorted(self.allowed))} (ripmarket serve --allow-host NAME adds one)")
        query = scope.get("query_string", b"")
        if b"token=" in query.lower():
            return await self._answer(
                send, 400, f"the seat token goes in the {SEAT_TOKEN_HEADER} header, not in the URL "
                           "(URLs end up in logs and browser history); the query string was not used")
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        too_big = (f"the request body is larger than {self.max_body:,} bytes, the most this server reads "
                   f"(ripmarket serve --max-body {self.max_body})")
        length = headers.get(b"content-length")
        if length is not None:
            try:
                if int(length) > self.max_body:
                    return await self._answer(send, 413, too_big)
            except ValueError:
                return await self._answer(send, 400, "the Content-Length header is not a number")
        chunks, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return await self._answer(send, 413, too_big)
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


# ------------------------------------------------------------------------------ bots
class BotPool:
    """One instance of each bot for the stateless endpoint, made on first use and then
    shared: a request re-seeds it (``reset(seed)``), so an answer is the same as a fresh
    ``agents.make(name, seed=seed)`` would give. One request per bot at a time."""

    def __init__(self, registry):
        import threading

        self.registry = registry
        self._bots: dict[str, Any] = {}
        self._locks: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._threading = threading

    def act(self, name: str, seed: int, obs: np.ndarray, mask: np.ndarray) -> int:
        with self._lock:
            lock = self._locks.setdefault(name, self._threading.Lock())
        with lock:
            bot = self._bots.get(name)
            if bot is None:
                bot = self._bots[name] = self.registry.make(name, seed=seed)
            else:
                bot.reset(seed)
            with KERNEL_LOCK:
                return int(bot.act(obs, mask))


def check_observation(values: list, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The observation as float32, if it is in the env's observation space: the right
    length, finite numbers, each within its feature's bounds. ``ApiError(422)`` otherwise."""
    n = low.size
    if len(values) != n:
        raise ApiError(422, f"observation has {len(values)} values; expected exactly {n} "
                            "(GET /api/bots gives observation_size)")
    big = next((i for i, x in enumerate(values) if isinstance(x, int) and abs(x) > 10**6), None)
    if big is not None:  # before any float conversion: a 400-digit integer has no float
        raise ApiError(422, f"observation[{big}] is {_short(values[big])}; allowed: a number from "
                            f"{float(low[big]):g} to {float(high[big]):g}")
    x = np.array(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        i = int(bad[0])
        raise ApiError(422, f"observation[{i}] is {values[i]!r}; allowed: finite numbers "
                            f"(this feature: {float(low[i]):g} to {float(high[i]):g})")
    with np.errstate(over="ignore"):  # beyond float32: inf, out of bounds below
        out = x.astype(np.float32)
    bad = np.flatnonzero((out < low) | (out > high))
    if bad.size:
        i = int(bad[0])
        raise ApiError(422, f"observation[{i}] is {_short(values[i])}, outside its feature's bounds; allowed: "
                            f"{float(low[i]):g} to {float(high[i]):g} ({bad.size} value(s) out of bounds; "
                            "the bounds are the env's observation space, ripmarket_env.games.ripmarket.observation."
                            "observation_bounds)")
    return out


def check_mask(values: list, n: int) -> np.ndarray:
    if len(values) != n:
        raise ApiError(422, f"action_mask has {len(values)} values; expected exactly {n} "
                            "(GET /api/bots gives num_actions)")
    bad = next((i for i, x in enumerate(values) if x not in (0, 1)), None)  # True == 1, False == 0
    if bad is not None:
        raise ApiError(422, f"action_mask[{bad}] is {_short(values[bad])}; allowed: 0 or 1")
    mask = np.array([int(x) for x in values], dtype=bool)
    if not mask.any():
        raise ApiError(422, "action_mask has no 1: a decision needs at least one legal action")
    return mask


# ------------------------------------------------------------------------------ app
GameId = Annotated[str, PathParam(min_length=1, max_length=64, description="The game_id from POST /api/games.")]
Token = Annotated[str, Header(alias=SEAT_TOKEN_HEADER, min_length=1, max_length=64,
                              description="Your seat_token from POST /api/games.")]
BotName = Annotated[str, PathParam(min_length=1, max_length=40, description="A bot name from GET /api/bots.")]


def default_db_path() -> Path:
    """Where ``ripmarket serve`` keeps its games by default: ``$XDG_DATA_HOME/ripmarket/
    server.sqlite3`` (``~/.local/share/ripmarket/server.sqlite3``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ripmarket" / "server.sqlite3"


def create_app(max_games: int = 64, idle_seconds: float = 1800.0, *, max_games_per_client: int = 4,
               max_age_seconds: float = 4 * 3600.0, keep_seconds: float = 7 * 24 * 3600.0,
               db: str | Path = ":memory:", allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
               max_body: int = MAX_BODY_BYTES, bot_threads: int | None = None, clock=None,
               warm_up: bool = False) -> FastAPI:
    """The app. ``db`` is the SQLite file of its games (``":memory:"``: gone with the
    process); ``allowed_hosts`` the names the Host header may carry (None: no check);
    ``bot_threads`` the worker threads that run bots (default: the CPU count, at least 2);
    ``warm_up`` loads the engine and the slow bots in the background at once
    (``ripmarket serve`` does)."""
    import time

    from ripmarket_env.app.narrate import bot_level
    from ripmarket_env.app.server.warmup import Warmup

    limits = Limits(max_games=max_games, max_games_per_client=max_games_per_client, idle_seconds=idle_seconds,
                    max_age_seconds=max_age_seconds, keep_seconds=keep_seconds)
    manager = GameManager(limits, Store(db), clock=clock or time.time)
    registry = agent_registry()
    pool = BotPool(registry)
    warm = Warmup(registry)
    if warm_up:
        warm.start()
    from ripmarket_env.games.ripmarket.cards.loader import default_cards
    from ripmarket_env.games.ripmarket.actions import ActionTable
    from ripmarket_env.games.ripmarket.observation import observation_bounds

    cards = default_cards()
    table = ActionTable(cards.n_living, cards.n_shadow)
    low, high = observation_bounds(cards)
    obs_size = int(low.size)
    num_actions = table.size
    BotActIn = _bot_act_model(low, high, num_actions)
    # Bots (game set-up, answers, the bot endpoint) run in their own few threads: a burst of
    # heavy bot work cannot take the threads that serve reads, nor block the event loop.
    bot_limiter = anyio.CapacityLimiter(bot_threads or max(2, os.cpu_count() or 2))

    async def in_bot_thread(fn, *args):
        return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=bot_limiter)

    app = FastAPI(
        title="R.I.P. Market",
        version="2",
        summary="Play R.I.P. Market against the bots.",
        description=__doc__,
    )
    app.state.games = manager
    app.state.warmup = warm
    app.state.bots = pool
    app.add_middleware(Guard, allowed_hosts=allowed_hosts, max_body=max_body)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return JSONResponse({"detail": exc.message}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        headers = dict(exc.headers or {})
        detail = exc.detail
        if exc.status_code == 405:
            # Starlette's Allow names the methods of the first route that matched the path;
            # a path served by several routes (GET and DELETE /api/games/{id}) has them all.
            methods = set()
            for route in app.router.routes:
                if getattr(route, "methods", None) and route.matches(request.scope)[0] != Match.NONE:
                    methods |= set(route.methods)
            allowed = ", ".join(sorted(methods))
            headers["Allow"] = allowed
            detail = f"method {request.method} is not allowed on {_short(request.url.path)}; allowed: {allowed}"
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _validation_message(request, list(exc.errors()))}, status_code=422)

    def find(game_id: str, token: str):
        try:
            return manager.open(game_id, token)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except GameGone as exc:
            raise ApiError(410, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None

    def view(game) -> dict:
        if game.session is None:
            return dict(game.row.final_view)
        v = game.session.view()
        v["game_id"] = game.game_id
        return v

    # -------------------------------------------------------------- games
    @app.post("/api/games", response_model=GameCreated, status_code=201, responses=ERRORS, tags=["games"],
              summary="Start a game against the bots")
    async def create_game(body: CreateGame, request: Request) -> dict:
        known = playable_bots()
        bad = [n for n in body.opponents if n not in known]
        if bad:
            refused = unavailable_bots()
            if bad[0] in refused:
                raise ApiError(422, f"opponents: bot {bad[0]} cannot play these cards: {refused[bad[0]]}; "
                                    f"allowed: {', '.join(known)}")
            raise ApiError(422, f"opponents: unknown bot {_short(bad[0])}; allowed: {', '.join(known)}")
        if body.seat >= body.players:
            raise ApiError(422, f"seat: {body.seat} is not a seat of a {body.players}-player game; "
                                f"allowed: 0 to {body.players - 1}")
        rules = body.rules.model_dump(exclude_none=True) if body.rules is not None else None
        client = request.client.host if request.client else "unknown"
        warm.prepare(body.opponents)

        def run():
            game, token = manager.create(client, body.players, body.seat, body.opponents, seed=body.seed, rules=rules)
            with game.lock:
                out = view(game)
            out["seat_token"] = token
            return out

        try:
            return await in_bot_thread(run)
        except TooManyGames as exc:
            raise ApiError(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
        except SetupError as exc:
            raise ApiError(422, str(exc)) from None

    @app.get("/api/games/{game_id}", response_model=GameView, responses=ERRORS, tags=["games"],
             summary="The game as your seat sees it")
    def read_game(game_id: GameId, token: Token) -> dict:
        game = find(game_id, token)
        with game.lock:
            return view(game)

    @app.post("/api/games/{game_id}/actions", response_model=GameView, responses=ERRORS, tags=["games"],
              summary="Take your decision; the bots then play until your next one")
    async def act(game_id: GameId, body: ActionIn, token: Token) -> dict:
        def run():
            game = find(game_id, token)
            with game.lock:
                s = game.session
                if s is None or s.over:
                    raise ApiError(409, "the game is over; no more actions are accepted "
                                        f"(GET /api/games/{game_id}/record for its record)")
                if body.decision_number != s.decision_number:
                    raise ApiError(409, f"decision_number {body.decision_number} is not the pending decision "
                                        f"{s.decision_number}: that decision was already answered (a repeated "
                                        "or stale request); GET the game and answer its decision_number. "
                                        "The game was not changed.")
                legal = s.legal_actions()
                choices = {c.action: c.text for c in s.choices()} if s.your_turn else {}
                allowed = "; ".join(f"{a} ({t})" for a, t in choices.items())
                if not 0 <= body.action < num_actions:
                    raise ApiError(422, f"action {body.action} is out of range (actions are 0 to "
                                        f"{num_actions - 1}); legal now: {allowed}")
                try:
                    s.act(body.action)
                except NotYourTurnError as exc:  # pragma: no cover - the bots always play up to your turn
                    raise ApiError(409, str(exc)) from None
                except GameOverError as exc:  # pragma: no cover - checked above
                    raise ApiError(409, str(exc)) from None
                except IllegalActionError:
                    raise ApiError(
                        409, f"action {body.action} is not legal now (decision: {s.phase}); "
                             f"legal actions: {allowed or ', '.join(map(str, legal))}. The game was not changed."
                    ) from None
                out = view(game)
                manager.acted(game)
                return out

        return await in_bot_thread(run)

    @app.get("/api/games/{game_id}/record", response_class=NdjsonResponse, responses=ERRORS_AS_JSON, tags=["games"],
             summary="The game record (JSON lines) of a finished game")
    def record(game_id: GameId, token: Token):
        game = find(game_id, token)
        with game.lock:
            if game.row.record is None:
                raise ApiError(409, "the game is not over yet: its record shows every hand and face-down card, "
                                    "so it is available once the game has ended")
            text = game.row.record
        return NdjsonResponse(
            text,
            headers={"Content-Disposition": f'attachment; filename="ripmarket-{game_id}.jsonl"'},
        )

    @app.delete("/api/games/{game_id}", status_code=204, responses=ERRORS, tags=["games"], summary="Drop a game")
    def delete_game(game_id: GameId, token: Token):
        try:
            manager.delete(game_id, token)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None
        return Response(status_code=204)

    # -------------------------------------------------------------- bots
    @app.get("/api/bots", response_model=BotsOut, tags=["bots"], summary="The bots you can play against")
    def bots() -> dict:
        refused = unavailable_bots()
        return {
            "bots": [{"name": n, "description": registry.describe(n), "level": bot_level(n)}
                     for n in registry.names() if n not in refused],
            "unavailable": [{"name": n, "description": registry.describe(n), "reason": why}
                            for n, why in refused.items()],
            "default_opponents": default_opponents(10),
            "observation_size": obs_size,
            "num_actions": num_actions,
        }

    @app.get("/api/status", response_model=StatusOut, tags=["bots"], responses={422: ERRORS[422]},
             summary="What the server is loading (the engine, slow bots) and whether it is ready")
    def status(game: Literal["ripmarket", "rune-market", "black-market"] = "ripmarket",
               bots: Annotated[str, Field(max_length=400)] = "") -> dict:
        """``game`` and ``bots`` (comma-separated): what ``ready`` is about."""
        return warm.status(game, [b for b in bots.split(",") if b][:10])

    async def bot_act(name: BotName, body) -> dict:
        from agents.checkpoint import CheckpointError

        known = registry.names()
        if name not in known:
            raise ApiError(404, f"unknown bot {_short(name)}; allowed: {', '.join(known)}")
        obs = check_observation(body.observation, low, high)
        mask = check_mask(body.action_mask, num_actions)
        seed = body.seed if body.seed is not None else 0
        try:
            a = await in_bot_thread(pool.act, name, seed, obs, mask)
        except CheckpointError as exc:  # a trained bot of other cards (e.g. the first edition's stages)
            raise ApiError(409, f"bot {name} cannot play these cards: {exc}") from None
        if not (0 <= a < num_actions and mask[a]):  # pragma: no cover - agents return legal actions
            a = int(np.flatnonzero(mask)[0])
        return {"action": a, "description": table.describe(a, cards)}

    bot_act.__annotations__["body"] = BotActIn  # built for this card database, so not a module name
    app.post("/api/bots/{name}/act", response_model=BotActOut, responses=ERRORS, tags=["bots"],
             summary="One decision of a bot for an observation and action mask (stateless)")(bot_act)

    # -------------------------------------------------------------- The Rune Market
    from ripmarket_env.app.server.rune import add_rune_routes

    add_rune_routes(app, ApiError, STATIC, limits, in_bot_thread, clock=clock, errors=ERRORS, store=manager.store,
                    warmup=warm)

    # -------------------------------------------------------------- Black Market
    from ripmarket_env.app.server.blackmarket import add_black_market_routes

    add_black_market_routes(app, ApiError, STATIC, limits, in_bot_thread, manager.store, clock=clock,
                            errors=ERRORS, warmup=warm)

    # -------------------------------------------------------------- page
    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
