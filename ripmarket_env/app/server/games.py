"""The server's games: create, find by id and seat token, act under a per-game lock.

Every game is a :class:`ripmarket_env.app.play.GameSession` held in memory with its own lock,
so requests for one game run one at a time while different games interleave freely.
At most ``max_games`` games are held; when the table is full, games idle for longer than
``idle_seconds`` and then finished games (least recently used first) make room, and if
none can, creating a game fails with :class:`TooManyGames` (HTTP 429).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ripmarket_env.app.play import GameSession

__all__ = ["BadToken", "GameManager", "ManagedGame", "TooManyGames", "UnknownGame"]


class UnknownGame(LookupError):
    """No game has this id."""


class BadToken(PermissionError):
    """The token is not this game's seat token."""


class TooManyGames(RuntimeError):
    """The server already holds ``max_games`` games it cannot drop."""


@dataclass
class ManagedGame:
    game_id: str
    token: str
    session: GameSession
    lock: threading.Lock = field(default_factory=threading.Lock)
    created: float = field(default_factory=time.monotonic)
    touched: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.touched = time.monotonic()


class GameManager:
    def __init__(self, max_games: int = 64, idle_seconds: float = 3600.0,
                 session_factory: Callable[..., GameSession] = GameSession):
        if int(max_games) < 1:
            raise ValueError(f"max_games must be at least 1, got {max_games}")
        self.max_games = int(max_games)
        self.idle_seconds = float(idle_seconds)
        self.session_factory = session_factory
        self._games: dict[str, ManagedGame] = {}
        self._reserved = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._games)

    # ------------------------------------------------------------------ room
    def _make_room(self) -> bool:
        """Under ``self._lock``: drop idle, then finished games until one more fits."""
        if len(self._games) + self._reserved < self.max_games:
            return True
        now = time.monotonic()
        idle = sorted((g for g in self._games.values() if now - g.touched > self.idle_seconds),
                      key=lambda g: g.touched)
        idle_ids = {g.game_id for g in idle}
        done = sorted((g for g in self._games.values() if g.session.over and g.game_id not in idle_ids),
                      key=lambda g: g.touched)
        for g in idle + done:
            if len(self._games) + self._reserved < self.max_games:
                break
            if g.lock.acquire(blocking=False):  # never drop a game in the middle of a request
                try:
                    self._games.pop(g.game_id, None)
                finally:
                    g.lock.release()
        return len(self._games) + self._reserved < self.max_games

    # ------------------------------------------------------------------ api
    def create(self, players: int, seat: int, opponents: Sequence[str], seed: int | None = None,
               rules: dict | None = None) -> ManagedGame:
        """A new game (bots play up to your first decision). Raises ``TooManyGames`` or
        ``ripmarket_env.app.play.SetupError``."""
        with self._lock:
            if not self._make_room():
                raise TooManyGames(
                    f"the server already holds its maximum of {self.max_games} games "
                    f"(ripmarket serve --max-games {self.max_games}); finish or delete a game "
                    "(DELETE /api/games/{id}?token=...) or try again later"
                )
            self._reserved += 1
        try:
            session = self.session_factory(players, seat, opponents, seed=seed, rules=rules)
            game = ManagedGame(secrets.token_urlsafe(12), secrets.token_urlsafe(24), session)
            with self._lock:
                while game.game_id in self._games:  # pragma: no cover - 96 random bits
                    game.game_id = secrets.token_urlsafe(12)
                self._games[game.game_id] = game
            return game
        finally:
            with self._lock:
                self._reserved -= 1

    def get(self, game_id: str, token: str) -> ManagedGame:
        """The game, if ``token`` is its seat token. Raises ``UnknownGame`` / ``BadToken``."""
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise UnknownGame(
                f"no game with id {game_id!r} (finished games are dropped when the server needs room); "
                "create one with POST /api/games"
            )
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), game.token.encode()):
            raise BadToken(
                f"the token does not match game {game_id!r}; send the seat_token that POST /api/games returned"
            )
        game.touch()
        return game

    def delete(self, game_id: str, token: str) -> None:
        game = self.get(game_id, token)
        with game.lock, self._lock:
            self._games.pop(game_id, None)
