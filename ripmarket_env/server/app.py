"""The FastAPI app: the JSON API for playing against the bots, and the web page.

``create_app(max_games=64)`` builds it; ``ripmarket serve`` runs it with uvicorn.

API (OpenAPI schema at ``/openapi.json``, browsable at ``/docs``):

* ``POST /api/games`` — a new game: ``{players, seat, opponents[], seed?, rules?}``;
  returns the game as your seat sees it plus ``game_id`` and ``seat_token``.
* ``GET /api/games/{id}?token=`` — the game from your seat's point of view: the table,
  your hand with card texts, legal actions with descriptions, this round's log, the
  round summaries and the result once it is over. Never another seat's hidden cards.
* ``POST /api/games/{id}/actions`` ``{token, action}`` — your decision; the bots then
  play until your next decision or the end of the game.
* ``GET /api/games/{id}/record?token=`` — the game record (JSON lines, replayable with
  ``ripmarket replay``) once the game is over; it shows every hand, so not before.
* ``DELETE /api/games/{id}?token=`` — drop a game.
* ``GET /api/bots`` — the bots (with a plain difficulty label), the observation size and
  the number of actions.
* ``GET /api/status`` — whether the engine and the slow bots are loaded, and what is
  loading now (the page shows it while a first game is being set up).
* ``POST /api/bots/{name}/act`` ``{observation, action_mask}`` — one stateless bot decision.

Errors are JSON ``{"detail": "<what was wrong and what is allowed>"}`` with a 4xx status;
a request that fails changes no game.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

from ..engine.core import IllegalActionError
from ..play import KERNEL_LOCK, GameOverError, NotYourTurnError, SetupError, agent_registry
from .games import BadToken, GameManager, TooManyGames, UnknownGame

STATIC = Path(__file__).parent / "static"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


# ------------------------------------------------------------------------------ models
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RulesIn(Strict):
    """Rule variants (docs/RULES.md, "Rule variants"); omitted fields keep the rulebook's values."""

    start_hp: Optional[StrictInt] = Field(None, description="1-9; default 3 for 2-3 players, 2 for 4-10")
    market_size: Optional[StrictInt] = Field(None, description="1-4; default 3 for 2-6 players, 4 for 7-10")
    ghost_cap: Optional[StrictInt] = Field(None, description="1-5; default 2 for 2-6 players, 3 for 7-10")
    tie_rule: Optional[Literal["all", "earliest"]] = None
    epilogue: Optional[StrictBool] = Field(None, description="2-player haunting epilogue (2 players only)")
    ghost_phase: Optional[Literal["in_turn", "first"]] = None
    max_rounds: Optional[StrictInt] = Field(None, description="1-1000; default 3 x players x start HP")
    reward_mode: Optional[Literal["win", "placement"]] = None
    hand_size: Optional[StrictInt] = Field(None, description="1-6; default 3")


class CreateGame(Strict):
    players: StrictInt = Field(..., ge=2, le=10, description="Seats at the table, 2-10.")
    seat: StrictInt = Field(0, ge=0, le=9, description="Your seat, 0 to players-1.")
    opponents: list[str] = Field(
        ..., min_length=1, max_length=9,
        description="Bot names (GET /api/bots) for the other seats in seat order; a shorter list is repeated.",
    )
    seed: Optional[StrictInt] = Field(None, ge=0, le=2**63 - 1, description="Game seed; random if omitted.")
    rules: Optional[RulesIn] = None

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"players": 4, "seat": 0, "opponents": ["greedy", "survivor", "shark"]}]},
    )


class ActionIn(Strict):
    token: str = Field(..., min_length=1, description="The seat_token from POST /api/games.")
    action: StrictInt = Field(..., description="One of the legal_actions' action numbers.")


class BotActIn(Strict):
    observation: list[StrictFloat | StrictInt] = Field(..., description="The seat's observation vector.")
    action_mask: list[StrictInt | StrictBool] = Field(..., description="1 for each legal action, 0 otherwise.")
    seed: Optional[StrictInt] = Field(None, ge=0, le=2**63 - 1, description="Seed of the bot's own RNG (default 0).")


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
    forced: bool = Field(description="Taken by the engine: the only legal option (R-12.1).")
    kind: str = Field(description="An event kind of the engine's event log (ripmarket_env.engine.events: "
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
    kind: str = Field(description="scores, damage, deflect, hit, haunt or death")
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
    seed: int
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


class StatusOut(BaseModel):
    ready: bool
    stage: Optional[str] = Field(description="What is loading now, in words; null when idle.")
    done: int
    total: int
    elapsed: float
    error: Optional[str]


class BotsOut(BaseModel):
    bots: list[BotInfo]
    observation_size: int
    num_actions: int


class BotActOut(BaseModel):
    action: int
    description: str


class Problem(BaseModel):
    detail: str


ERRORS = {
    400: {"model": Problem}, 403: {"model": Problem}, 404: {"model": Problem},
    409: {"model": Problem}, 422: {"model": Problem}, 429: {"model": Problem},
}


# ------------------------------------------------------------------------------ errors
_SHAPES = {
    "create": '{"players": 2-10, "seat": 0..players-1, "opponents": ["greedy", ...], "seed": optional integer >= 0, '
              '"rules": optional object}',
    "action": '{"token": "<seat_token>", "action": <integer from legal_actions>}',
    "bot": '{"observation": [<observation_size> numbers], "action_mask": [<num_actions> values 0 or 1]}',
}


def _where(loc: tuple) -> str:
    parts = [str(x) for x in loc if x not in ("body",)]
    if loc and loc[0] == "query":
        return f"query parameter {parts[1]!r}" if len(parts) > 1 else "query"
    if loc and loc[0] == "path":
        return f"path parameter {parts[1]!r}" if len(parts) > 1 else "path"
    return ".".join(parts) if parts else "the request body"


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
            got_txt = f" (got {got!r})"
        elif isinstance(got, (dict, list)):
            got_txt = f" (got a JSON {'object' if isinstance(got, dict) else 'array'})"
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


# ------------------------------------------------------------------------------ app
def create_app(max_games: int = 64, idle_seconds: float = 3600.0, warm_up: bool = False) -> FastAPI:
    """The app, holding at most ``max_games`` games in memory; ``warm_up`` loads the
    engine and the slow bots in the background at once (``ripmarket serve`` does)."""
    from ..narrate import bot_level
    from .warmup import Warmup

    manager = GameManager(max_games=max_games, idle_seconds=idle_seconds)
    registry = agent_registry()
    warm = Warmup(registry)
    if warm_up:
        warm.start()
    from ..cards.loader import default_cards
    from ..engine.actions import ActionTable
    from ..engine.observation import layout

    db = default_cards()
    table = ActionTable(db.n_living, db.n_shadow)
    obs_size = layout(db.n_living, db.n_shadow).size
    num_actions = table.size

    app = FastAPI(
        title="R.I.P. Market",
        version="1",
        summary="Play R.I.P. Market against the bots.",
        description=__doc__,
    )
    app.state.games = manager
    app.state.warmup = warm

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return JSONResponse({"detail": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _validation_message(request, list(exc.errors()))}, status_code=422)

    def view(game) -> dict:
        v = game.session.view()
        v["game_id"] = game.game_id
        return v

    def find(game_id: str, token: str):
        try:
            return manager.get(game_id, token)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None

    # -------------------------------------------------------------- games
    @app.post("/api/games", response_model=GameCreated, status_code=201, responses=ERRORS, tags=["games"],
              summary="Start a game against the bots")
    def create_game(body: CreateGame) -> dict:
        known = registry.names()
        bad = [n for n in body.opponents if n not in known]
        if bad:
            raise ApiError(422, f"opponents: unknown bot {bad[0]!r}; allowed: {', '.join(known)}")
        if body.seat >= body.players:
            raise ApiError(422, f"seat: {body.seat} is not a seat of a {body.players}-player game; "
                                f"allowed: 0 to {body.players - 1}")
        rules = body.rules.model_dump(exclude_none=True) if body.rules is not None else None
        warm.prepare(body.opponents)
        try:
            game = manager.create(body.players, body.seat, body.opponents, seed=body.seed, rules=rules)
        except TooManyGames as exc:
            raise ApiError(429, str(exc)) from None
        except SetupError as exc:
            raise ApiError(422, str(exc)) from None
        with game.lock:
            out = view(game)
        out["seat_token"] = game.token
        return out

    @app.get("/api/games/{game_id}", response_model=GameView, responses=ERRORS, tags=["games"],
             summary="The game as your seat sees it")
    def read_game(game_id: str, token: Annotated[str, Query(description="Your seat_token.")]) -> dict:
        game = find(game_id, token)
        with game.lock:
            return view(game)

    @app.post("/api/games/{game_id}/actions", response_model=GameView, responses=ERRORS, tags=["games"],
              summary="Take your decision; the bots then play until your next one")
    def act(game_id: str, body: ActionIn) -> dict:
        game = find(game_id, body.token)
        with game.lock:
            s = game.session
            if s.over:
                raise ApiError(409, "the game is over; no more actions are accepted "
                                    f"(GET /api/games/{game_id}/record?token=... for its record)")
            legal = s.legal_actions()
            choices = {c.action: c.text for c in s.choices()} if s.your_turn else {}
            allowed = "; ".join(f"{a} ({t})" for a, t in choices.items())
            if not 0 <= body.action < num_actions:
                raise ApiError(422, f"action {body.action} is out of range (actions are 0 to {num_actions - 1}); "
                                    f"legal now: {allowed}")
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
            return view(game)

    @app.get("/api/games/{game_id}/record", response_class=PlainTextResponse, responses=ERRORS, tags=["games"],
             summary="The game record (JSON lines) of a finished game")
    def record(game_id: str, token: Annotated[str, Query(description="Your seat_token.")]):
        game = find(game_id, token)
        with game.lock:
            if not game.session.over:
                raise ApiError(409, "the game is not over yet: its record shows every hand and face-down card, "
                                    "so it is available once the game has ended")
            text = game.session.record_text()
        return PlainTextResponse(
            text, media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="ripmarket-{game_id}.jsonl"'},
        )

    @app.delete("/api/games/{game_id}", status_code=204, responses=ERRORS, tags=["games"], summary="Drop a game")
    def delete_game(game_id: str, token: Annotated[str, Query(description="Your seat_token.")]):
        try:
            manager.delete(game_id, token)
        except UnknownGame as exc:
            raise ApiError(404, str(exc)) from None
        except BadToken as exc:
            raise ApiError(403, str(exc)) from None
        return PlainTextResponse("", status_code=204)

    # -------------------------------------------------------------- bots
    @app.get("/api/bots", response_model=BotsOut, tags=["bots"], summary="The bots you can play against")
    def bots() -> dict:
        return {
            "bots": [{"name": n, "description": registry.describe(n), "level": bot_level(n)} for n in registry.names()],
            "observation_size": obs_size,
            "num_actions": num_actions,
        }

    @app.get("/api/status", response_model=StatusOut, tags=["bots"],
             summary="What the server is loading (the engine, slow bots) and whether it is ready")
    def status() -> dict:
        return warm.status()

    @app.post("/api/bots/{name}/act", response_model=BotActOut, responses=ERRORS, tags=["bots"],
              summary="One decision of a bot for an observation and action mask (stateless)")
    def bot_act(name: str, body: BotActIn) -> dict:
        known = registry.names()
        if name not in known:
            raise ApiError(404, f"unknown bot {name!r}; allowed: {', '.join(known)}")
        if len(body.observation) != obs_size:
            raise ApiError(422, f"observation has {len(body.observation)} values; expected exactly {obs_size} "
                                "(GET /api/bots gives observation_size)")
        if len(body.action_mask) != num_actions:
            raise ApiError(422, f"action_mask has {len(body.action_mask)} values; expected exactly {num_actions} "
                                "(GET /api/bots gives num_actions)")
        bad = next((i for i, x in enumerate(body.observation) if not math.isfinite(float(x))), None)
        if bad is not None:
            raise ApiError(422, f"observation[{bad}] is {body.observation[bad]!r}; allowed: finite numbers")
        bad = next((i for i, x in enumerate(body.action_mask) if int(x) not in (0, 1)), None)
        if bad is not None:
            raise ApiError(422, f"action_mask[{bad}] is {body.action_mask[bad]!r}; allowed: 0 or 1")
        mask = np.array([int(x) for x in body.action_mask], dtype=bool)
        if not mask.any():
            raise ApiError(422, "action_mask has no 1: a decision needs at least one legal action")
        obs = np.array(body.observation, dtype=np.float32)
        bot = registry.make(name, seed=body.seed if body.seed is not None else 0)
        with KERNEL_LOCK:
            a = int(bot.act(obs, mask))
        if not (0 <= a < num_actions and mask[a]):  # pragma: no cover - agents return legal actions
            a = int(np.flatnonzero(mask)[0])
        return {"action": a, "description": table.describe(a, db)}

    # -------------------------------------------------------------- page
    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
