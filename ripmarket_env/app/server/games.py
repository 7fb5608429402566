"""The server's games: create, find by id and seat token, act under a per-game lock,
limits per client and in all, expiry, and a store that outlives the process.

Every live game is a play session of one registered game (``kinds.GameKind.make``) with
its own lock, so requests for one game run one at a time while different games
interleave freely. A game is found by its game (the registry id) and its id together:
one game's id opens nothing in another.

Limits (``Limits``; ``ripmarket serve`` options; docs/SERVER.md):

* at most ``max_games`` live games in all and ``max_games_per_client`` per client (the
  peer address of the connection), every game counted together; past either, creating a game fails with :class:`TooManyGames`, which
  says when a slot frees up (HTTP 429 with ``Retry-After``);
* a live game expires when no decision was answered for ``idle_seconds`` or when it is
  ``max_age_seconds`` old, whatever happens: reading a game does not keep it alive;
* a game whose page went away (its tab closed: the page's beacon, :meth:`GameManager.away`)
  and that saw no request of its player for ``away_seconds`` since expires ("tab closed"):
  it stops counting toward its client's limit after that short grace, while a reload
  within the grace (its request clears the mark) keeps the game;
* a finished game leaves the live games at once (its slot is free) and, like an
  expired one, stays in the store for ``keep_seconds`` after it ended: finished games
  can be read and their records fetched for that long, expired ones answer 410.

Every game is written to a :class:`ripmarket_env.app.server.store.Store` (SQLite) as it
changes, so a restarted server brings live games back (re-playing their actions) and
still serves finished games and their records.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ripmarket_env.app.server.kinds import GameKind, SetupRefused, kinds as registered_kinds
from ripmarket_env.app.server.store import GameRow, Store, token_digest

__all__ = ["BadToken", "GameGone", "GameManager", "Limits", "ManagedGame", "TooManyGames", "UnknownGame"]


class UnknownGame(LookupError):
    """No game has this id (or it ended longer than ``keep_seconds`` ago)."""


class GameGone(LookupError):
    """The game expired (idle, too old) before it ended."""


class BadToken(PermissionError):
    """The token is not this game's seat token."""


class TooManyGames(RuntimeError):
    """No slot for another live game now; ``retry_after`` seconds until one frees up."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = int(retry_after)


@dataclass(frozen=True)
class Limits:
    max_games: int = 64
    max_games_per_client: int = 4
    idle_seconds: float = 1800.0
    max_age_seconds: float = 4 * 3600.0
    keep_seconds: float = 7 * 24 * 3600.0
    away_seconds: float = 30.0

    def __post_init__(self):
        for name in ("max_games", "max_games_per_client"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer of at least 1, got {v!r}")
        for name in ("idle_seconds", "max_age_seconds", "keep_seconds", "away_seconds"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {v!r}")


@dataclass
class ManagedGame:
    """A game as the server holds it: ``session`` while it is live, ``row`` always;
    ``away_since``: when its page said it went away (kept in memory only: a restarted
    server forgets it, and the game then lives until its idle timeout); ``page``: the id
    of the page that last sent a request of the game (the page's ``X-Page-Id``), so that a
    page's late beacon cannot mark away a game a newer page of it has taken up."""

    row: GameRow
    session: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    away_since: float | None = None
    page: str | None = None

    @property
    def game_id(self) -> str:
        return self.row.game_id

    @property
    def live(self) -> bool:
        return self.row.status == "live"

    def expires_at(self, limits: Limits) -> float:
        away = self.away_since + limits.away_seconds if self.away_since is not None else math.inf
        return min(self.row.last_action + limits.idle_seconds, self.row.created + limits.max_age_seconds, away)


def _when(seconds: float) -> str:
    s = max(1, math.ceil(seconds))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 172800 or s % 86400:
        return f"{s / 3600:g} h" if s % 360 == 0 else f"{s / 3600:.1f} h"
    return f"{s // 86400} days"


class GameManager:
    """The live games of every game in memory (rebuilt from the store on first use after a
    restart), every game in the store. ``kinds``: the games it seats, by id (default: every
    registered game: its own web session, else the generic TableSession)."""

    def __init__(self, limits: Limits | None = None, store: Store | None = None,
                 kinds: dict[str, GameKind] | None = None, clock: Callable[[], float] = time.time):
        self.limits = limits or Limits()
        self.store = store if store is not None else Store(":memory:")
        self.kinds = kinds if kinds is not None else registered_kinds()
        self.clock = clock
        self._live: dict[str, ManagedGame] = {g.game_id: ManagedGame(g) for g in self.store.live()}
        self._reserved: dict[str, int] = {}
        self._lock = threading.Lock()
        self._purged = -math.inf

    def __len__(self) -> int:
        """Live games."""
        with self._lock:
            return len(self._live)

    # ------------------------------------------------------------------ expiry
    def _expired_reason(self, g: ManagedGame, now: float) -> str | None:
        lim = self.limits
        if now - g.row.last_action > lim.idle_seconds:
            return (f"no decision was answered for {_when(lim.idle_seconds)} "
                    f"(ripmarket serve --idle-timeout {lim.idle_seconds:g})")
        if now - g.row.created > lim.max_age_seconds:
            return f"it reached the maximum game age of {_when(lim.max_age_seconds)} " \
                   f"(ripmarket serve --max-game-age {lim.max_age_seconds:g})"
        if g.away_since is not None and now - g.away_since > lim.away_seconds:
            return (f"tab closed: its page went away and did not come back within {_when(lim.away_seconds)} "
                    f"(ripmarket serve --away-grace {lim.away_seconds:g})")
        return None

    def _expire(self, g: ManagedGame, reason: str, now: float) -> None:
        """Under ``self._lock`` and ``g.lock``."""
        g.row.status, g.row.ended, g.row.end_reason = "expired", now, reason
        g.session = None
        self._live.pop(g.game_id, None)
        self.store.expire(g.game_id, now, reason)

    def sweep(self) -> int:
        """Expire idle, too-old and away live games (not one in the middle of a request);
        drop finished ones past ``keep_seconds``. How many games were expired."""
        now = self.clock()
        n = 0
        with self._lock:
            for g in list(self._live.values()):
                reason = self._expired_reason(g, now)
                if reason and g.lock.acquire(blocking=False):
                    try:
                        self._expire(g, reason, now)
                        n += 1
                    finally:
                        g.lock.release()
            if now - self._purged > 60:
                self._purged = now
                self.store.purge(now - self.limits.keep_seconds)
        return n

    # ------------------------------------------------------------------ create
    def create(self, game: str, client: str, players: int, seat: int, opponents: Sequence[str],
               seed: int | None = None, rules: dict | None = None) -> tuple[ManagedGame, str]:
        """A new game of ``game`` (bots play up to your first decision) and its seat token.
        Raises ``TooManyGames`` or ``kinds.SetupRefused``."""
        kind = self.kinds[game]
        self.sweep()
        lim = self.limits
        with self._lock:
            now = self.clock()
            mine = [g for g in self._live.values() if g.row.client == client]
            if len(mine) + self._reserved.get(client, 0) >= lim.max_games_per_client:
                wait = min((g.expires_at(lim) for g in mine), default=now + 1) - now
                raise TooManyGames(
                    f"you already have {lim.max_games_per_client} live games, the most one player may have at once "
                    f"(ripmarket serve --max-games-per-client {lim.max_games_per_client}). To start a new game, end "
                    f"one you are not playing any more (the page's \"End my previous game\" button, or DELETE "
                    f"/api/<game>/games/<game_id> with its seat token), or retry in {_when(wait)}, when one of your "
                    "games expires (idle, or its tab closed)",
                    math.ceil(max(wait, 1)))
            if len(self._live) + sum(self._reserved.values()) >= lim.max_games:
                wait = min((g.expires_at(lim) for g in self._live.values()), default=now + 1) - now
                raise TooManyGames(
                    f"the server is busy: it already holds its maximum of {lim.max_games} live games "
                    f"(ripmarket serve --max-games {lim.max_games}); retry in {_when(wait)}, when the next "
                    f"idle game expires, or sooner if a game ends",
                    math.ceil(max(wait, 1)))
            self._reserved[client] = self._reserved.get(client, 0) + 1
        try:
            session = kind.make(players, seat, opponents, seed=seed, rules=rules)
            token = secrets.token_urlsafe(24)
            now = self.clock()
            row = GameRow(
                game=game, game_id=secrets.token_urlsafe(12), token_hash=token_digest(token), client=client,
                players=session.players, seat=session.seat, opponents=list(opponents), seed=session.seed,
                practice=session.practice, rules=dict(rules or {}), steps=session.steps, status="live",
                created=now, last_action=now)
            managed = ManagedGame(row, session)
            with self._lock:
                while row.game_id in self._live or self.store.taken(row.game_id):  # pragma: no cover - 96 bits
                    row.game_id = secrets.token_urlsafe(12)
                self.store.insert(row)
                self._live[row.game_id] = managed
            if session.over:  # pragma: no cover - a game cannot end before a person's first decision
                self._finish(managed)
            return managed, token
        finally:
            with self._lock:
                self._reserved[client] -= 1
                if not self._reserved[client]:
                    del self._reserved[client]

    # ------------------------------------------------------------------ find
    def _check(self, row: GameRow, token: str) -> None:
        if not isinstance(token, str) or not secrets.compare_digest(token_digest(token), row.token_hash):
            raise BadToken(
                f"the seat token does not match game {row.game_id!r}; send the seat_token that "
                f"POST /api/{row.game}/games returned in the X-Seat-Token header (the away beacon: in its body)"
            )

    def _unknown(self, game: str, game_id: str) -> UnknownGame:
        shown = game_id if len(game_id) <= 40 else game_id[:40] + "..."
        return UnknownGame(
            f"no game of {self.kinds[game].title} with id {shown!r} (games are kept for "
            f"{_when(self.limits.keep_seconds)} after they end); create one with POST /api/{game}/games"
        )

    def open(self, game: str, game_id: str, token: str, page: str | None = None, back: bool = True) -> ManagedGame:
        """``game``'s game ``game_id``, if ``token`` is its seat token; a live game comes
        with its session (rebuilt from the store after a restart). ``page``: the id of the
        page that sent the request, if it sent one; ``back``: the request shows its player
        is there (every request but the away beacon), which clears an away mark. Take
        ``managed.lock`` before using it. Raises ``UnknownGame``, ``GameGone``, ``BadToken``."""
        with self._lock:
            managed = self._live.get(game_id)
        if managed is not None and managed.row.game != game:
            managed = None
        if managed is None:
            row = self.store.get(game, game_id)
            if row is None:
                raise self._unknown(game, game_id)
            managed = ManagedGame(row)
        self._check(managed.row, token)
        if managed.live:
            with managed.lock:
                now = self.clock()
                reason = self._expired_reason(managed, now)
                if reason is None and managed.session is None:
                    reason = self._restore(managed)
                if reason is None and back:
                    managed.away_since = None  # its player is back (a reload, a read, an answer)
                    if page is not None:
                        managed.page = page
                if reason is not None:
                    with self._lock:
                        self._expire(managed, reason, now)
        if managed.row.status == "expired":
            raise GameGone(f"{self.kinds[game].title} game {game_id!r} has expired: {managed.row.end_reason}; "
                           f"start a new one with POST /api/{game}/games")
        if managed.row.error is not None:
            raise GameGone(f"{self.kinds[game].title} game {game_id!r} could not be brought back from the "
                           f"server's store: {managed.row.error}; start a new one with POST /api/{game}/games")
        return managed

    def away(self, game: str, game_id: str, token: str, page: str | None = None) -> bool:
        """The page of ``game``'s game ``game_id`` went away (its tab closed or reloaded):
        mark the live game away from now; its player's next request clears the mark. Whether
        it was marked: a finished game is not, nor one whose last request came from another
        page than ``page`` (a reload's new page asked before the old page's beacon arrived).
        Raises what :meth:`open` raises."""
        managed = self.open(game, game_id, token, back=False)
        with managed.lock:
            if not managed.live or (page is not None and managed.page is not None and page != managed.page):
                return False
            managed.away_since = self.clock()
            return True

    def _restore(self, managed: ManagedGame) -> str | None:
        r = managed.row
        if r.error is not None:
            return r.error
        try:
            managed.session = self.kinds[r.game].make(r.players, r.seat, r.opponents, seed=r.seed,
                                                      rules=r.rules or None, steps=r.steps, practice=r.practice)
        except SetupRefused as exc:
            return f"it could not be brought back after a restart ({exc})"
        return None

    # ------------------------------------------------------------------ changes
    def acted(self, managed: ManagedGame) -> None:
        """Under ``managed.lock``, after a decision was answered: store it; a finished game
        moves from the live games to the finished ones."""
        managed.row.last_action = self.clock()
        managed.row.steps = managed.session.steps
        if managed.session.over:
            self._finish(managed)
        else:
            self.store.save_steps(managed.game_id, managed.row.steps, managed.row.last_action)

    def view(self, managed: ManagedGame) -> dict:
        """Under ``managed.lock``: the seat's view (a finished game's as it was kept)."""
        if managed.session is None:
            return dict(managed.row.final_view or {})
        return self.kinds[managed.row.game].view(managed.session, managed.game_id)

    def _finish(self, managed: ManagedGame) -> None:
        s = managed.session
        kind = self.kinds[managed.row.game]
        view = kind.view(s, managed.game_id)
        now = self.clock()
        managed.row.status, managed.row.ended, managed.row.end_reason = "over", now, "finished"
        managed.row.record, managed.row.final_view = kind.record(s), view
        self.store.finish(managed.game_id, managed.row.steps, now, managed.row.record, view)
        with self._lock:
            self._live.pop(managed.game_id, None)

    def delete(self, game: str, game_id: str, token: str) -> None:
        """Drop a game of any status (live, finished, expired) whose seat token this is."""
        try:
            managed = self.open(game, game_id, token)
        except GameGone:
            managed = ManagedGame(self.store.get(game, game_id))
        with managed.lock, self._lock:
            self._live.pop(game_id, None)
            self.store.delete(game_id)
            managed.session = None

    def client_games(self, client: str) -> int:
        with self._lock:
            return sum(1 for g in self._live.values() if g.row.client == client)
