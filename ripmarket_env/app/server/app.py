"""The FastAPI app: the JSON API for playing every registered game against the bots, and
the web pages.

``create_app()`` builds it; ``ripmarket serve`` runs it with uvicorn. docs/SERVER.md
describes the security model and the limits.

One set of routes, keyed by the game (``{game}``: a registered game id, listed in the
OpenAPI schema; ``kinds.py`` reads each game from its spec and its agents' profile). A
game's seat token travels in the ``X-Seat-Token`` header, never in a URL:

* ``POST /api/{game}/games`` — a new game: ``{players?, seat?, opponents?, seed?, rules?}``
  (``rules``: the variants the game's rules config offers at setup); returns the game as
  your seat sees it plus ``game_id`` and ``seat_token``. Without a seed the game gets a
  secret one, shown once the game is over; a chosen seed makes a practice game
  (``practice: true`` in its view and record).
* ``GET /api/{game}/games/{id}`` — the game from your seat's point of view: never another
  seat's hidden cards, nor the seed of a running game that was not chosen.
* ``POST /api/{game}/games/{id}/actions`` ``{action, decision_number}`` — your decision,
  naming the decision it answers (a repeated or stale answer gets 409); the bots then
  play until your next decision or the end of the game.
* ``GET /api/{game}/games/{id}/record`` — the game record (JSON lines, replayable with
  ``ripmarket replay``) once the game is over; it shows every hand, so not before.
* ``DELETE /api/{game}/games/{id}`` — end and drop a game (live, finished or expired).
* ``POST /api/{game}/games/{id}/away`` ``{seat_token, page?}`` — the page went away (the
  tab's ``pagehide`` beacon, which cannot set headers, so the token is in the body, JSON
  sent as ``application/json`` or ``text/plain``): unless its player's next request comes
  within the grace (``ripmarket serve --away-grace``), the game ends and stops counting.
  ``page`` names the page (the ``X-Page-Id`` its requests carried): a beacon is ignored
  once a newer page of the game has sent a request (a reload whose old page's beacon
  arrives after the new page's resume).
* ``GET /api/{game}/bots`` — the bots that can sit at the game's tables (with a plain
  difficulty label), the registered ones that cannot (``unavailable``, with the reason),
  the default line-up, the observation size and the number of actions; and what a set-up
  screen offers: the player counts, the default line-up per count, the rule variants
  (``setup_fields``) with the values each count allows and the rules' defaults.
* ``GET /api/catalog`` — every game the server seats (id, title, player counts, page); the
  lobby page ``/`` lists them, each game's page is ``/{game}``.
* ``GET /api/{game}/status`` — whether the game's engine and slow bots are loaded, and
  what is loading now.
* ``POST /api/{game}/bots/{name}/act`` ``{observation, action_mask}`` — one stateless bot
  decision, within a per-client budget.

The paths from before the other games, ``/api/games...``, ``/api/bots...`` and
``/api/status``, are the same routes for the agents' default game (``agents.base.DEFAULT_GAME``).

Errors are JSON ``{"detail": "<what was wrong and what is allowed>"}`` with a 4xx status;
a request that fails changes no game. Too many games or bot calls answer 429 with
``Retry-After``. A client is the peer address of the connection.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import threading
import time
import typing
from collections import deque
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import anyio
import numpy as np
from fastapi import FastAPI, Header, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, ValidationError, create_model
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from ripmarket_env.app.seat_session import GameOverError, NotYourTurnError, kernel_lock
from ripmarket_env.app.server.games import BadToken, GameGone, GameManager, Limits, TooManyGames, UnknownGame
from ripmarket_env.app.server.kinds import GameKind, SetupRefused, default_game, kinds as registered_kinds
from ripmarket_env.app.server.store import Store
from ripmarket_env.core import DISTRIBUTION
from ripmarket_env.core.engine import IllegalActionError
from ripmarket_env.core.jsonfile import short

STATIC = Path(__file__).parent / "static"


#: Host names the server answers to by default (the Host header is checked against
#: them: a page on another site cannot reach the server through DNS rebinding).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: Largest request body accepted (bytes): a bot request's observation fits in about 25 kB.
MAX_BODY_BYTES = 64 * 1024
#: Longest piece of a request echoed back in an error message (characters).
MAX_ECHO = 60
SEAT_TOKEN_HEADER = "X-Seat-Token"
PAGE_HEADER = "X-Page-Id"

log = logging.getLogger("ripmarket.server")


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _choice_pair(c) -> tuple[int, str]:
    """``(action, text)`` of a session's choice: an object (a web session's ``Choice``) or
    a dict (the generic ``TableSession``'s)."""
    if isinstance(c, dict):
        return int(c["action"]), str(c["text"])
    return int(c.action), str(c.text)


# ------------------------------------------------------------------------------ models
from ripmarket_env.app.server.fields import Int, IntIn  # noqa: E402  (integer fields of the schema)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionIn(Strict):
    action: IntIn(0, 10_000) = Field(..., description="The action number of one of the view's table.choices.")
    decision_number: IntIn(0, 10**9) = Field(...,
        description="The decision_number of the view this answers: an answer to a decision already taken "
                    "(a repeated or stale request) is refused with 409.")


class AwayIn(Strict):
    seat_token: str = Field(..., min_length=1, max_length=64,
                            description="Your seat_token from POST /api/{game}/games (a beacon cannot send headers).")
    page: str | None = Field(None, min_length=1, max_length=64,
                             description="The X-Page-Id this page sent with its requests, if it sent one: the "
                                         "beacon is ignored when a newer page of the game has sent a request since "
                                         "(a reload).")


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


def _camel(game: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in game.replace("_", "-").split("-") if w)


def _rules_model(kind: GameKind):
    """The ``rules`` object of ``kind``'s create body, from the rules config's
    ``setup_fields`` (a game that offers none takes an empty object, so that a client can
    send ``"rules": {}`` to every game)."""
    fields: dict = {}
    for name, frag in kind.setup_fields.items():
        if "enum" in frag:
            typ = Literal[tuple(frag["enum"])]
        elif frag.get("type") == "integer":
            typ = IntIn(int(frag["minimum"]), int(frag["maximum"]))
        elif frag.get("type") == "boolean":
            typ = StrictBool
        else:  # pragma: no cover - a fragment the server cannot state; the field is not offered
            continue
        fields[name] = (Optional[typ], Field(None, description=frag.get("description")))
    doc = (f"{kind.title}'s rule variants; omitted fields keep the rulebook's values." if fields else
           f"{kind.title} offers no rule variants here: an empty object, or omit it.")
    return create_model(f"{_camel(kind.id)}Rules", __config__=ConfigDict(extra="forbid"), __doc__=doc, **fields)


def _create_model(kind: GameKind):
    """``kind``'s create body. Its schema states what the server checks: the player counts,
    the bot names, and per player count (one ``oneOf`` branch each; an absent ``players``
    is the default count, so only that branch may then hold) the seats, how many bots may
    be named and the values of the variants the rules accept at that count
    (``GameKind.setup_values``)."""
    counts = kind.player_counts
    low, high, default = min(counts), max(counts), kind.spec.default_players
    rules_model = _rules_model(kind)
    def schema_extra(schema: dict) -> None:
        schema["examples"] = [{"players": default, "seat": 0, "opponents": kind.default_opponents(default)}]
        schema["properties"]["opponents"]["items"]["enum"] = kind.bots()
        if counts != list(range(low, high + 1)):
            schema["properties"]["players"]["enum"] = counts
        branches = []
        for p in counts:
            props: dict = {"players": {"const": p}, "seat": {"maximum": p - 1}, "opponents": {"maxItems": p - 1}}
            only = {}
            for n, ok in kind.setup_values[p].items():
                if kind.setup_fields[n].get("type") == "integer" and ok and ok == list(range(ok[0], ok[-1] + 1)):
                    only[n] = {"minimum": ok[0], "maximum": ok[-1]}  # numbers only: null stays allowed
                else:
                    only[n] = {"enum": [*ok, None]}
            if only:
                props["rules"] = {"properties": only}
            branches.append({"properties": props, **({} if p == default else {"required": ["players"]})})
        schema["oneOf"] = branches

    fields: dict = {
        "players": (IntIn(low, high), Field(default, description=f"Seats at the table: {', '.join(map(str, counts))} "
                                                                  f"(default {default}).")),
        "seat": (IntIn(0, high - 1), Field(0, description="Your seat, 0 to players-1.")),
        "opponents": (list[Annotated[str, Field(min_length=1, max_length=40)]], Field(
            None, min_length=1, max_length=high - 1,
            description=f"Bot names (GET /api/{kind.id}/bots) for the other seats in seat order; a shorter list is "
                        "repeated. Default: the game's default line-up.")),
        "seed": (Optional[IntIn(0, 2**53 - 1)], Field(
            None, description="Omit it for a real game: the server then draws a secret seed, shown once the game is "
                              "over. A chosen seed makes a practice game (its deal can be known in advance): "
                              "practice is true in its view and its record.")),
    }
    fields["rules"] = (Optional[rules_model], None)
    return create_model(f"Create{_camel(kind.id)}Game", __config__=ConfigDict(extra="forbid",
                        json_schema_extra=schema_extra), __doc__=f"A new game of {kind.title}.", **fields)


class GameView(BaseModel):
    """The game as your seat sees it: these fields in every game, and the game's own
    (its table, your hand, the choices, the log, the result)."""

    model_config = ConfigDict(extra="allow")
    game: str = Field(description="The game's registry id.")
    game_id: str
    seat: int
    players: int
    decision_number: int = Field(description="Number of the pending decision; send it with your action.")
    practice: bool = Field(description="The seed was chosen by the client: a practice game.")
    seed: Optional[int] = Field(description="The game's seed: null while a game with a secret seed runs; "
                                            "shown once it is over, and always in a practice game.")


class GameCreated(GameView):
    seat_token: str = Field(description="Send it with every request for this game; it is your seat's key.")


class BotInfo(BaseModel):
    name: str
    description: str
    level: str = ""


class StatusPart(BaseModel):
    name: str = Field(description="The part: `<game> engine` (a game's rules engine) or a bot's name.")
    game: str = Field(description="The game the part belongs to.")
    what: str = Field(description="The part in words, naming its game.")
    ready: bool


class StatusOut(BaseModel):
    ready: bool = Field(description="Nothing is loading and the asked game's engine (and the bots named) is ready.")
    stage: Optional[str] = Field(description="What is loading now for the asked game, in words (its kernels or bot, "
                                             "with an estimate), else what the server is busy with; null when idle.")
    loading: list[str] = Field(default_factory=list, description="Everything loading now, in words, the asked "
                                                                 "game's first.")
    done: int
    total: int
    elapsed: float
    error: Optional[str]
    parts: list[StatusPart] = Field(description="Every part the warm-up loads, the asked game's first, then in the "
                                                "warm-up's order: per game its engine and its default line-up's slow "
                                                "bots (games asked for first), then the other slow bots.")


class UnavailableBot(BaseModel):
    name: str
    description: str
    reason: str = Field(description="Why it cannot play the cards in play (a trained bot of other cards).")


class BotsOut(BaseModel):
    game: str = Field(description="The game these bots play.")
    title: str = Field("", description="The game's title.")
    bots: list[BotInfo] = Field(description="The bots that can play the cards in play: the names a game may seat.")
    unavailable: list[UnavailableBot] = Field(default_factory=list, description=(
        "Registered bots that cannot play the cards in play (e.g. the first edition's ppo-6p stages), "
        "with the reason; a game refuses them (422), the bot endpoint too (409)."))
    default_opponents: list[str] = Field(default_factory=list, description=(
        "The bots a new game's setup offers first, repeated round the table (the game's default bot, "
        "or its heuristics in turn)."))
    observation_size: int
    num_actions: int
    player_counts: list[int] = Field(description="The player counts the game's rules accept.")
    default_players: int = Field(description="The player count of a game set up without naming one.")
    lineups: dict[str, list[str]] = Field(description=(
        "Per player count (a string key), the default bot of every other seat in seat order: what "
        "`opponents` is when a create body names none."))
    setup_fields: dict[str, dict] = Field(description=(
        "The rule variants a create body's `rules` may set: JSON Schema fragments (`enum`, or `type` "
        "integer with `minimum`/`maximum`, or boolean) with a `description`."))
    setup_values: dict[str, dict[str, list]] = Field(description=(
        "Per player count, the variants that do not accept every value of their fragment there, "
        "with the values they do accept."))
    setup_defaults: dict[str, dict[str, Any]] = Field(description=(
        "Per player count, the value every variant has when `rules` leaves it out."))


class BotActOut(BaseModel):
    action: int
    description: str


class CatalogGame(BaseModel):
    id: str = Field(description="The game's registry id: its routes are under /api/{id}/, its page is /{id}.")
    title: str
    player_counts: list[int] = Field(description="The player counts a game may be set up with.")
    default_players: int
    page: str = Field(description="The game's web page (its path).")


class CatalogOut(BaseModel):
    games: list[CatalogGame] = Field(description="Every registered game, in the registry's order.")


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


def _links(token: str, older: bool = False) -> dict:
    """OpenAPI links from an answer that shows a game (its ``game`` and ``game_id``) to what a
    client does next with it: read it, answer its decision, fetch its record, end it; ``token``
    is where the seat token is (the new game's answer, or the request's header); ``older``:
    to the default game's older paths (``/api/games/...``)."""
    base = "#/paths/~1api~1games~1{game_id}" if older else "#/paths/~1api~1{game}~1games~1{game_id}"
    params = {"path.game_id": "$response.body#/game_id", f"header.{SEAT_TOKEN_HEADER}": token,
              **({} if older else {"path.game": "$response.body#/game"})}
    answer = {"action": "$response.body#/table/choices/0/action", "decision_number": "$response.body#/decision_number"}
    return {"links": {
        "ReadGame": {"operationRef": f"{base}/get", "parameters": params},
        "Act": {"operationRef": f"{base}~1actions/post", "parameters": params, "requestBody": answer},
        "Record": {"operationRef": f"{base}~1record/get", "parameters": params},
        "EndGame": {"operationRef": f"{base}/delete", "parameters": params},
    }}


class NdjsonResponse(PlainTextResponse):
    """A game record: JSON lines."""

    media_type = "application/x-ndjson"


# ------------------------------------------------------------------------------ errors
_SHAPES = {
    "create": '{"players": a player count of the game, "seat": 0..players-1, "opponents": [bot names, optional], '
              '"seed": optional integer 0..2**53-1 (makes a practice game), "rules": optional object}',
    "action": '{"action": <a legal action, from table.choices>, "decision_number": <the view\'s decision_number>} '
              '(and the seat token in the X-Seat-Token header)',
    "bot": '{"observation": [<observation_size> numbers], "action_mask": [<num_actions> values 0 or 1]}',
}


#: What a value of each branch of a union field is, for one message per value (pydantic
#: reports each branch: ``observation.0.float``, ``observation.0.function-before[_integral(), int]``).
_BRANCH_NOUNS = {"float": "a number", "int": "an integer", "bool": "true or false", "str": "a string"}


def _branch_noun(part) -> str | None:
    """The noun of a union branch's tag in an error location, or None for a field or index."""
    if not isinstance(part, str):
        return None
    word = re.search(r"(\w+)\]?$", part)
    tagged = part in _BRANCH_NOUNS or part.startswith(("function-", "constrained-"))
    return _BRANCH_NOUNS.get(word.group(1)) if tagged and word else None


def _one_per_value(errors: list[dict]) -> list[dict]:
    """The errors with each union's branches folded into one per value: its location
    without the branch tag and a message naming what each branch takes."""
    out: list[dict] = []
    at: dict[tuple, dict] = {}
    for e in errors:
        loc = tuple(e.get("loc", ()))
        noun = _branch_noun(loc[-1]) if loc else None
        if noun is None:
            out.append(e)
            continue
        key = loc[:-1]
        if key not in at:
            at[key] = {**e, "loc": key, "type": "union", "nouns": []}
            out.append(at[key])
        if noun not in at[key]["nouns"]:
            at[key]["nouns"].append(noun)
    for e in out:
        if e.get("type") == "union":
            nouns = e["nouns"]
            if "a number" in nouns and "an integer" in nouns:
                nouns.remove("an integer")
            e["msg"] = "input should be " + " or ".join(nouns)
    return out


def _where(loc: tuple) -> str:
    parts = []
    for x in loc:
        if x == "body":
            continue
        if isinstance(x, int) and parts:
            parts[-1] += f"[{x}]"
        else:
            parts.append(str(x))
    for kind in ("query", "path", "header"):
        if loc and loc[0] == kind:
            return f"{kind} parameter {short(parts[1], MAX_ECHO)}" if len(parts) > 1 else kind
    if not parts:
        return "the request body"
    text = short(".".join(parts), MAX_ECHO)  # the repr of a str: without its quotes
    return text[1:-1] if len(text) > 1 and text[-1] == text[0] else text[1:]


def _fields_beside(request: Request, loc: tuple) -> list[str] | None:
    """The fields the request body's model allows in the object that holds ``loc`` (for an
    unknown field: the ones it could have meant), or None where that is not a model."""
    model = getattr(getattr(getattr(request.scope.get("route"), "body_field", None), "field_info", None),
                    "annotation", None)
    for part in [x for x in loc[:-1] if x != "body"]:
        fields = getattr(model, "model_fields", None)
        if not isinstance(fields, dict) or part not in fields:
            return None
        model = fields[part].annotation
        args = [a for a in typing.get_args(model) if a is not type(None)]
        if len(args) == 1 and typing.get_origin(model) is not None and type(None) in typing.get_args(model):
            model = args[0]  # Optional[X]
    fields = getattr(model, "model_fields", None)
    return list(fields) if isinstance(fields, dict) else None


def _validation_message(request: Request, errors: list[dict]) -> str:
    out = []
    errors = _one_per_value(errors)
    for e in errors[:5]:
        where = _where(tuple(e.get("loc", ())))
        typ = e.get("type", "")
        msg = e.get("msg", "invalid")
        if typ == "json_invalid":
            out.append(f"the request body is not valid JSON ({e.get('ctx', {}).get('error', msg)})")
            continue
        if typ == "extra_forbidden":
            allowed = _fields_beside(request, tuple(e.get("loc", ())))
            out.append(f"{where}: unknown field" + ("" if allowed is None else
                       f"; allowed: {', '.join(allowed)}" if allowed else "; this object takes no fields"))
            continue
        if typ == "missing":
            out.append(f"{where}: required but missing")
            continue
        got = e.get("input")
        got_txt = ""
        if got is not None and not isinstance(got, (dict, list)):
            got_txt = f" (got {short(got, MAX_ECHO)})"
        elif isinstance(got, (dict, list)):
            got_txt = f" (got a JSON {'object' if isinstance(got, dict) else 'array'})"
        elif "input" in e:
            got_txt = " (got null)"
        msg = msg[:200]
        out.append(f"{where}: {msg[0].lower() + msg[1:] if msg else msg}{got_txt}")
    if len(errors) > 5:
        out.append(f"and {len(errors) - 5} more")
    path = request.url.path
    shape = _SHAPES["bot"] if path.endswith("/act") else (
        _SHAPES["action"] if path.endswith("/actions") else _SHAPES["create"] if path.endswith("/games") else None)
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
                    send, 400, f"the Host header {short(host, MAX_ECHO)} is not a name of this server; allowed: "
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
    """One instance of each bot of each game for the stateless endpoint, made on first use
    and then shared: a request re-seeds it (``reset(seed)``), so an answer is the same as a
    fresh ``agents.make(name, game, seed=seed)`` would give. One request per bot at a time."""

    def __init__(self):
        self._bots: dict[tuple[str, str], Any] = {}
        self._locks: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def act(self, game: str, name: str, seed: int, obs: np.ndarray, mask: np.ndarray) -> int:
        import agents

        key = (game, name)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            bot = self._bots.get(key)
            if bot is None:
                bot = self._bots[key] = agents.make(name, game, seed=seed)
            else:
                bot.reset(seed)
            with kernel_lock():
                return int(bot.act(obs, mask))


class Budget:
    """At most ``calls`` requests per client in any ``seconds``-long window (a sliding
    window of each client's latest calls); ``take`` answers how long to wait, 0 when the
    call may go ahead (and counts it)."""

    def __init__(self, calls: int, seconds: float, clock=time.monotonic):
        self.calls, self.seconds, self.clock = int(calls), float(seconds), clock
        self._seen: dict[str, deque] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> int:
        now = self.clock()
        with self._lock:
            for key in [k for k, q in self._seen.items() if not q or q[-1] <= now - self.seconds]:
                del self._seen[key]  # clients gone quiet hold no memory
            q = self._seen.setdefault(client, deque())
            while q and q[0] <= now - self.seconds:
                q.popleft()
            if len(q) >= self.calls:
                return max(1, math.ceil(q[0] + self.seconds - now))
            q.append(now)
            return 0


def check_observation(values: list, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The observation as float32, if it is in the env's observation space: the right
    length, finite numbers, each within its feature's bounds. ``ApiError(422)`` otherwise."""
    n = low.size
    if len(values) != n:
        raise ApiError(422, f"observation has {len(values)} values; expected exactly {n} "
                            "(GET /api/<game>/bots gives observation_size)")
    big = next((i for i, x in enumerate(values) if isinstance(x, int) and abs(x) > 10**6), None)
    if big is not None:  # before any float conversion: a 400-digit integer has no float
        raise ApiError(422, f"observation[{big}] is {short(values[big], MAX_ECHO)}; allowed: a number from "
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
        raise ApiError(422, f"observation[{i}] is {short(values[i], MAX_ECHO)}, outside its feature's bounds; allowed: "
                            f"{float(low[i]):g} to {float(high[i]):g} ({bad.size} value(s) out of bounds; "
                            "the bounds are the env's observation space, GameSpec.observation_bounds)")
    return out


def check_mask(values: list, n: int) -> np.ndarray:
    if len(values) != n:
        raise ApiError(422, f"action_mask has {len(values)} values; expected exactly {n} "
                            "(GET /api/<game>/bots gives num_actions)")
    bad = next((i for i, x in enumerate(values) if x not in (0, 1)), None)  # True == 1, False == 0
    if bad is not None:
        raise ApiError(422, f"action_mask[{bad}] is {short(values[bad], MAX_ECHO)}; allowed: 0 or 1")
    mask = np.array([int(x) for x in values], dtype=bool)
    if not mask.any():
        raise ApiError(422, "action_mask has no 1: a decision needs at least one legal action")
    return mask




# ------------------------------------------------------------------------------ app
GameIdParam = Annotated[str, PathParam(min_length=1, max_length=64, description="The game_id from POST /api/{game}/games.")]
Token = Annotated[str, Header(alias=SEAT_TOKEN_HEADER, min_length=1, max_length=64,
                              description="Your seat_token from POST /api/{game}/games.")]
PageId = Annotated[str | None, Header(alias=PAGE_HEADER, min_length=1, max_length=64,
                                      description="Optional: an id of the page sending the request, new at each "
                                                  "page load; the page's away beacon names it too (POST .../away).")]
BotName = Annotated[str, PathParam(min_length=1, max_length=40, description="A bot name from GET /api/{game}/bots.")]


def default_db_path() -> Path:
    """Where ``ripmarket serve`` keeps its games by default: ``$XDG_DATA_HOME/ripmarket/
    server.sqlite3`` (``~/.local/share/ripmarket/server.sqlite3``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / DISTRIBUTION / "server.sqlite3"


def client_of(request: Request) -> str:
    """The client a limit counts: the peer address of the connection (behind
    ``ripmarket serve --trust-proxy ADDR`` uvicorn has put the proxy's client there)."""
    return request.client.host if request.client else "unknown"


def create_app(max_games: int = 64, idle_seconds: float = 1800.0, *, max_games_per_client: int = 4,
               max_age_seconds: float = 4 * 3600.0, keep_seconds: float = 7 * 24 * 3600.0,
               db: str | Path = ":memory:", allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
               max_body: int = MAX_BODY_BYTES, bot_threads: int | None = None, clock=None,
               warm_up: bool = False, bot_calls: int = 120, bot_seconds: float = 60.0,
               kinds: dict[str, GameKind] | None = None, away_seconds: float = 30.0) -> FastAPI:
    """The app. ``db`` is the SQLite file of its games (``":memory:"``: gone with the
    process); ``allowed_hosts`` the names the Host header may carry (None: no check);
    ``bot_threads`` the worker threads that run bots (default: the CPU count, at least 2);
    ``bot_calls`` per ``bot_seconds``: each client's budget of stateless bot decisions;
    ``away_seconds``: the grace of a game whose page went away (its tab's beacon) before it
    ends and stops counting; ``warm_up`` loads the engines and the slow bots in the background at once
    (``ripmarket serve`` does); ``kinds``: the games served (default: every registered
    game: its own web session, else the generic TableSession)."""
    from ripmarket_env.app.server.warmup import Warmup

    kinds = dict(kinds if kinds is not None else registered_kinds())
    primary = default_game() if default_game() in kinds else next(iter(kinds))
    limits = Limits(max_games=max_games, max_games_per_client=max_games_per_client, idle_seconds=idle_seconds,
                    max_age_seconds=max_age_seconds, keep_seconds=keep_seconds, away_seconds=away_seconds)
    manager = GameManager(limits, Store(db, legacy_game=primary), kinds=kinds, clock=clock or time.time)
    pool = BotPool()
    budget = Budget(bot_calls, bot_seconds)
    warm = Warmup(kinds, helpers=max(1, (os.cpu_count() or 2) // 2) if warm_up else 0)
    if warm_up:
        warm.start()
    # Bots (game set-up, answers, the bot endpoint) run in their own few threads: a burst of
    # heavy bot work cannot take the threads that serve reads, nor block the event loop.
    bot_limiter = anyio.CapacityLimiter(bot_threads or max(2, os.cpu_count() or 2))

    async def in_bot_thread(fn, *args):
        return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=bot_limiter)

    titles = ", ".join(k.title for k in kinds.values())
    app = FastAPI(title=DISTRIBUTION, version="3", summary=f"Play {titles} against the bots.", description=__doc__)
    app.state.games = manager
    app.state.warmup = warm
    app.state.bots = pool
    app.state.bot_budget = budget
    app.state.kinds = kinds
    app.add_middleware(Guard, allowed_hosts=allowed_hosts, max_body=max_body)
    Game = Enum("Game", {gid.replace("-", "_"): gid for gid in kinds}, type=str)  # the registered ids
    GameParam = Annotated[Game, PathParam(description="A registered game: " + ", ".join(kinds))]

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
            detail = f"method {request.method} is not allowed on {short(request.url.path, MAX_ECHO)}; allowed: {allowed}"
        if exc.status_code == 400 and detail == "There was an error parsing the body":
            # FastAPI's answer to a body its JSON parser raised on (not a JSONDecodeError):
            # thousands of nested brackets (RecursionError) - a body no route takes
            return JSONResponse({"detail": _validation_message(request, [{
                "type": "json_invalid", "loc": ("body",), "ctx": {"error": "nested too deeply"}}])},
                status_code=422)
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _validation_message(request, list(exc.errors()))}, status_code=422)

    def find(game: str, game_id: str, token: str, how=None, page: str | None = None):
        try:
            return (how or manager.open)(game, game_id, token, page)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except GameGone as exc:
            raise ApiError(410, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None

    errors = {**ERRORS, 410: ERRORS[404]}
    errors_as_json = {**ERRORS_AS_JSON, 410: ERRORS_AS_JSON[404]}
    created = {**errors, 201: _links("$response.body#/seat_token")}  # links: the game's next requests
    shown = {**errors, 200: _links(f"$request.header.{SEAT_TOKEN_HEADER}")}
    created_older = {**errors, 201: _links("$response.body#/seat_token", older=True)}
    shown_older = {**errors, 200: _links(f"$request.header.{SEAT_TOKEN_HEADER}", older=True)}

    # -------------------------------------------------------------- a game's routes
    def read_game(game: GameParam, game_id: GameIdParam, token: Token, page: PageId = None) -> dict:
        managed = find(game.value, game_id, token, page=page)
        with managed.lock:
            return manager.view(managed)

    async def act(game: GameParam, game_id: GameIdParam, body: ActionIn, token: Token, page: PageId = None) -> dict:
        kind = kinds[game.value]

        def run():
            managed = find(game.value, game_id, token, page=page)
            with managed.lock:
                s = managed.session
                if s is None or s.over:
                    raise ApiError(409, "the game is over; no more actions are accepted "
                                        f"(GET /api/{game.value}/games/{game_id}/record for its record)")
                if body.decision_number != s.decision_number:
                    when = ("that decision was already answered (a repeated or stale request)"
                            if body.decision_number < s.decision_number else "that decision has not come yet")
                    raise ApiError(409, f"decision_number {body.decision_number} is not the pending decision "
                                        f"{s.decision_number}: {when}; GET the game and answer its "
                                        "decision_number. The game was not changed.")
                with kernel_lock():
                    legal = s.legal_actions() if s.your_turn else []
                    choices = dict(map(_choice_pair, s.choices())) if s.your_turn else {}
                    allowed = "; ".join(f"{a} ({t})" for a, t in choices.items()) or ", ".join(map(str, legal))
                    if not 0 <= body.action < kind.num_actions:  # the schema's bound is every game's: 409 as illegal
                        raise ApiError(409, f"action {body.action} is out of range (actions are 0 to "
                                            f"{kind.num_actions - 1}); legal now: {allowed}")
                    if body.action not in legal:
                        raise ApiError(409, f"action {body.action} is not legal now (decision: {s.phase}); "
                                            f"legal actions: {allowed}. The game was not changed.")
                    try:
                        s.act(body.action)
                    except (NotYourTurnError, GameOverError) as exc:  # pragma: no cover - checked above
                        raise ApiError(409, str(exc)) from None
                    except IllegalActionError:  # pragma: no cover - checked above
                        raise ApiError(409, f"action {body.action} is not legal now; legal actions: {allowed}. "
                                            "The game was not changed.") from None
                out = kind.view(s, managed.game_id)
                manager.acted(managed)
                return out

        return await in_bot_thread(run)

    def record(game: GameParam, game_id: GameIdParam, token: Token):
        managed = find(game.value, game_id, token)
        with managed.lock:
            if managed.row.record is None:
                raise ApiError(409, "the game is not over yet: its record shows every hand and face-down card, "
                                    "so it is available once the game has ended")
            text = managed.row.record
        return NdjsonResponse(
            text, headers={"Content-Disposition": f'attachment; filename="{game.value}-{game_id}.jsonl"'})

    def delete_game(game: GameParam, game_id: GameIdParam, token: Token):
        try:
            manager.delete(game.value, game_id, token)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None
        return Response(status_code=204)

    async def away(game: GameParam, game_id: GameIdParam, request: Request):
        """Sent by the page's ``pagehide`` beacon: ``navigator.sendBeacon`` cannot set headers, so
        the seat token comes in the body (this JSON object, sent as application/json or as
        text/plain). The live game is marked away: any later request of its player (a read, an
        answer, a reload's resume) clears the mark; without one within the grace (``ripmarket
        serve --away-grace``) the game expires ("tab closed") and no longer counts toward the
        live-game limit. A finished game is left as it is."""
        raw = await request.body()
        if not raw.strip():
            raise ApiError(422, 'invalid request: the request body is missing; send {"seat_token": '
                                '"<your seat_token>"}')
        try:
            beacon = AwayIn.model_validate_json(raw)
        except ValidationError as exc:
            raise ApiError(422, _validation_message(request, exc.errors()) +
                           '. Expected a JSON object {"seat_token": "<your seat_token>"} (and optionally '
                           '"page": "<your X-Page-Id>")') from None
        await anyio.to_thread.run_sync(lambda: find(game.value, game_id, beacon.seat_token, manager.away, beacon.page))
        return Response(status_code=204)

    def bots(game: GameParam) -> dict:
        kind = kinds[game.value]
        refused = kind.unavailable()
        return {
            "game": kind.id,
            "title": kind.title,
            "bots": [{"name": n, "description": kind.describe_bot(n), "level": kind.level(n)} for n in kind.bots()],
            "unavailable": [{"name": n, "description": kind.describe_bot(n), "reason": why}
                            for n, why in refused.items()],
            "default_opponents": kind.default_opponents(),
            "observation_size": int(kind.observation_bounds[0].size),
            "num_actions": kind.num_actions,
            "player_counts": kind.player_counts,
            "default_players": int(kind.spec.default_players),
            "lineups": {str(p): kind.default_opponents(p) for p in kind.player_counts},
            "setup_fields": kind.setup_fields,
            "setup_values": {str(p): v for p, v in kind.setup_values.items()},
            "setup_defaults": {str(p): v for p, v in kind.setup_defaults.items()},
        }

    def status(game: GameParam, bots: Annotated[str, Field(max_length=400)] = "") -> dict:
        """``bots`` (comma-separated): what ``ready`` is about, besides the game's engine.
        Asking puts the game (and these bots) first in the warm-up."""
        names = [b for b in bots.split(",") if b][:10]
        warm.want(game.value, names)
        return warm.status(game.value, names)

    for fn in (read_game, act, record, delete_game, away, bots, status):  # local types: not by name
        fn.__annotations__["game"] = GameParam

    def create_route(kind: GameKind):
        Body = _create_model(kind)

        async def create_game(body: Body, request: Request) -> dict:  # type: ignore[valid-type]
            players = body.players
            if players not in kind.player_counts:
                raise ApiError(422, f"players: {players} is not allowed for {kind.title}; allowed: "
                                    f"{', '.join(map(str, kind.player_counts))}")
            if body.seat >= players:
                raise ApiError(422, f"seat: {body.seat} is not a seat of a {players}-player game; "
                                    f"allowed: 0 to {players - 1}")
            opponents = list(body.opponents) if body.opponents is not None else kind.default_opponents(players)
            if len(opponents) > players - 1:
                raise ApiError(422, f"opponents: {len(opponents)} bots named for {players - 1} other seat(s); "
                                    f"allowed: 1 to {players - 1} names")
            known = kind.bots()
            bad = [n for n in opponents if n not in known]
            if bad:
                refused = kind.unavailable()
                if bad[0] in refused:
                    raise ApiError(422, f"opponents: bot {bad[0]} cannot play these cards: {refused[bad[0]]}; "
                                        f"allowed: {', '.join(known)}")
                raise ApiError(422, f"opponents: unknown bot {short(bad[0], MAX_ECHO)} for {kind.title}; "
                                    f"allowed: {', '.join(known)}")
            rules = getattr(body, "rules", None)
            rules = rules.model_dump(exclude_none=True) if rules is not None else {}
            client = client_of(request)

            def run():
                warm.prepare(kind.id, opponents)
                managed, token = manager.create(kind.id, client, players, body.seat, opponents, seed=body.seed,
                                                rules=rules)
                with managed.lock:
                    out = manager.view(managed)
                out["seat_token"] = token
                return out

            try:
                return await in_bot_thread(run)
            except TooManyGames as exc:
                raise ApiError(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
            except SetupRefused as exc:
                raise ApiError(422, str(exc)) from None

        create_game.__annotations__["body"] = Body
        return create_game

    def bot_act_route(kind: GameKind):
        low, high = kind.observation_bounds
        n_actions = kind.num_actions
        BotActIn = create_model(f"{_camel(kind.id)}BotActIn", __base__=_bot_act_model(low, high, n_actions))

        async def bot_act(name: BotName, body: BotActIn, request: Request) -> dict:  # type: ignore[valid-type]
            from agents.checkpoint import CheckpointError

            known = kind.all_bots()
            if name not in known:
                raise ApiError(404, f"unknown bot {short(name, MAX_ECHO)} for {kind.title}; allowed: {', '.join(known)}")
            obs = check_observation(body.observation, low, high)
            mask = check_mask(body.action_mask, n_actions)
            wait = budget.take(client_of(request))
            if wait:
                raise ApiError(429, f"too many bot decisions from your address: at most {budget.calls} every "
                                    f"{budget.seconds:g} s (ripmarket serve --bot-calls {budget.calls}); retry in "
                                    f"{wait} s", headers={"Retry-After": str(wait)})
            seed = body.seed if body.seed is not None else 0
            try:
                a = await in_bot_thread(pool.act, kind.id, name, seed, obs, mask)
            except CheckpointError as exc:  # a trained bot of other cards (e.g. ppo-6p with the first edition's)
                raise ApiError(409, f"bot {name} cannot play these cards: {exc}") from None
            except Exception as exc:  # in bounds, yet no table of the game shows it (e.g. more dice than a game has)
                log.warning("bot %s of %s refused an observation: %s: %s", name, kind.id, type(exc).__name__, exc)
                raise ApiError(409, f"observation: bot {name} cannot read it ({short(str(exc), MAX_ECHO)}); each value is within "
                                    f"its bounds, but together they are not a {kind.title} position a seat can see") from None
            if not (0 <= a < n_actions and mask[a]):  # pragma: no cover - agents return legal actions
                a = int(np.flatnonzero(mask)[0])
            return {"action": a, "description": kind.describe_action(a)}

        bot_act.__annotations__["body"] = BotActIn
        return bot_act

    def fixed(fn, game: str):
        """``fn`` for one game: the route of an older path without ``{game}``."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(Game(game), *args, **kwargs)

        sig = __import__("inspect").signature(fn)
        wrapper.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "game"])
        wrapper.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != "game"}
        return wrapper

    def fixed_async(fn, game: str):
        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            return await fn(Game(game), *args, **kwargs)

        sig = __import__("inspect").signature(fn)
        wrapper.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "game"])
        wrapper.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != "game"}
        return wrapper

    # The older paths of the default game first: /api/games/{id} must not be read as a game id.
    old = "the default game's older path, the same as "
    app.post("/api/games", response_model=GameCreated, status_code=201, responses=created_older, tags=["games"],
             summary=f"Start a game ({old}POST /api/{primary}/games)")(create_route(kinds[primary]))
    app.get("/api/games/{game_id}", response_model=GameView, responses=shown_older, tags=["games"],
            summary=f"The game as your seat sees it ({old}GET /api/{primary}/games/{{game_id}})")(fixed(read_game, primary))
    app.post("/api/games/{game_id}/actions", response_model=GameView, responses=shown_older, tags=["games"],
             summary=f"Take your decision ({old}POST /api/{primary}/games/{{game_id}}/actions)")(
        fixed_async(act, primary))
    app.get("/api/games/{game_id}/record", response_class=NdjsonResponse, responses=errors_as_json, tags=["games"],
            summary=f"The record of a finished game ({old}GET /api/{primary}/games/{{game_id}}/record)")(
        fixed(record, primary))
    app.delete("/api/games/{game_id}", status_code=204, responses=errors, tags=["games"],
               summary=f"End and drop a game ({old}DELETE /api/{primary}/games/{{game_id}})")(fixed(delete_game, primary))
    app.get("/api/bots", response_model=BotsOut, tags=["bots"],
            summary=f"The bots you can play against ({old}GET /api/{primary}/bots)")(fixed(bots, primary))
    app.post("/api/bots/{name}/act", response_model=BotActOut, responses=errors, tags=["bots"],
             summary=f"One stateless bot decision ({old}POST /api/{primary}/bots/{{name}}/act)")(
        bot_act_route(kinds[primary]))

    def status_any(game: Game = Game(primary), bots: Annotated[str, Field(max_length=400)] = "") -> dict:
        """``game`` and ``bots`` (comma-separated): what ``ready`` is about."""
        names = [b for b in bots.split(",") if b][:10]
        warm.want(game.value, names)
        return warm.status(game.value, names)

    status_any.__annotations__["game"] = Game
    app.get("/api/status", response_model=StatusOut, tags=["bots"], responses={422: ERRORS[422]},
            summary="What the server is loading and whether a game is ready (the older path)")(status_any)

    # Every game's routes.
    for kind in kinds.values():
        app.post(f"/api/{kind.id}/games", response_model=GameCreated, status_code=201, responses=created,
                 tags=["games"], summary=f"Start a game of {kind.title} against the bots")(create_route(kind))
        app.post(f"/api/{kind.id}/bots/{{name}}/act", response_model=BotActOut, responses=errors, tags=["bots"],
                 summary=f"One decision of a {kind.title} bot for an observation and action mask "
                         "(stateless)")(bot_act_route(kind))
    app.get("/api/{game}/games/{game_id}", response_model=GameView, responses=shown, tags=["games"],
            summary="The game as your seat sees it")(read_game)
    app.post("/api/{game}/games/{game_id}/actions", response_model=GameView, responses=shown, tags=["games"],
             summary="Take your decision; the bots then play until your next one")(act)
    app.get("/api/{game}/games/{game_id}/record", response_class=NdjsonResponse, responses=errors_as_json,
            tags=["games"], summary="The game record (JSON lines) of a finished game")(record)
    app.delete("/api/{game}/games/{game_id}", status_code=204, responses=errors, tags=["games"],
               summary="End and drop a game (live, finished or expired)")(delete_game)
    app.post("/api/{game}/games/{game_id}/away", status_code=204, responses=errors, tags=["games"],
             summary="Your page went away (its beacon): the game ends unless you come back within the grace",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": AwayIn.model_json_schema()}}}})(away)
    app.get("/api/{game}/bots", response_model=BotsOut, responses={422: ERRORS[422]}, tags=["bots"],
            summary="The bots you can play against")(bots)
    app.get("/api/{game}/status", response_model=StatusOut, responses={422: ERRORS[422]}, tags=["bots"],
            summary="What the server is loading (engines, slow bots) and whether the game is ready")(status)

    @app.get("/api/catalog", response_model=CatalogOut, tags=["games"],
             summary="Every game the server seats: its title, player counts and page")
    def catalog() -> dict:
        return {"games": [{"id": k.id, "title": k.title, "player_counts": k.player_counts,
                           "default_players": k.spec.default_players, "page": f"/{k.id}"} for k in kinds.values()]}

    # -------------------------------------------------------------- pages
    @app.get("/", include_in_schema=False)
    def index():
        """The lobby: every registered game (``GET /api/catalog``) with a link to its page."""
        return FileResponse(STATIC / "lobby.html", media_type="text/html")

    @app.get("/{game}", include_in_schema=False)
    def page(game: str):
        """A game's page: the one page, ``static/generic.html``, which draws any game from its
        table description and loads the game's plugin (``/plugins/<game>.js``)."""
        if game not in kinds:
            raise ApiError(404, f"no page {short('/' + game, MAX_ECHO)}; pages: /, " + ", ".join(f"/{g}" for g in kinds))
        return FileResponse(STATIC / "generic.html", media_type="text/html")

    @app.get("/plugins/{game}.js", include_in_schema=False)
    def plugin(game: str):
        """A game's client-side table plugin (``GameSpec.web``, ``games/<pkg>/web/table.js``),
        which the generic page loads; an empty script for a game that draws with the generic
        page alone."""
        if game not in kinds:
            raise ApiError(404, f"no game {short(game, MAX_ECHO)}; games: " + ", ".join(kinds))
        web = kinds[game].spec.web
        if web and Path(web).is_file():
            return FileResponse(web, media_type="text/javascript")
        return Response("// this game draws with the generic page alone\n", media_type="text/javascript")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
