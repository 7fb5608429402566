"""Play R.I.P. Market against the bots: one game session, and the terminal game.

``GameSession`` holds one game between one person (``seat``) and registered agents in
every other seat. It is shared by ``ripmarket play`` (the terminal game below) and
``ripmarket serve`` (``ripmarket_env.app.server``):

>>> s = GameSession(players=3, seat=0, opponents=["greedy", "survivor"], seed=7)
>>> s.your_turn, [c.text for c in s.choices()]
>>> s.act(s.choices()[0].action)       # your decision, then the bots play until your next one
>>> s.view()                           # the game as your seat sees it (JSON-ready dict)
>>> s.record_text()                    # the game record (JSON lines, ripmarket_env.envs.record)

Every decision goes through a ``Recorder``, so a finished game can be saved and replayed
with ``ripmarket replay``. Bots see only their seat's observation and mask.

What happened between two of your decisions (the other seats' choices, the decisions
the engine took alone because they had one legal option, card effects, face-down cards
revealed at resolution, scores, damage, deaths, Ghosts' hauntings and the result) is told
by the log, built from the engine's own event log (``ripmarket_env.games.ripmarket.events``):
every entry is shown as your seat may see it (R-12.3).
"""

from __future__ import annotations

import secrets
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ripmarket_env.games.ripmarket.config import C_HP, C_MARKET, ConfigError, RulesConfig
from ripmarket_env.games.ripmarket.engine import IllegalActionError
from ripmarket_env.games.ripmarket.events import Event, RoundLog
from ripmarket_env.games.ripmarket.state import PHASE_NAMES
from ripmarket_env.envs.record import Recorder
from ripmarket_env.games.ripmarket.render import (
    card_label,
    phase_text,
    render_text,
    rule_label,
    seat_name,
    shadow_label,
)

__all__ = [
    "Choice",
    "Event",
    "GameOverError",
    "GameSession",
    "NotYourTurnError",
    "SetupError",
    "agent_registry",
    "assign_opponents",
    "play_terminal",
]

MAX_BOT_STEPS = 100_000

#: Bits of the seed a game gets when none is chosen (``secrets.randbits``): far more than
#: can be searched, and drawn from the OS's cryptographic source, so the deal cannot be
#: predicted from it or worked out in advance.
SECRET_SEED_BITS = 128

# numba's parallel kernels may run on a threading layer that is not thread-safe (the
# "workqueue" layer when neither OpenMP nor TBB is present): every call into the engine
# kernels, and every bot decision (a bot may call kernels of its own), takes this lock.
# The calls are short (microseconds to milliseconds), so games still interleave freely.
KERNEL_LOCK = threading.RLock()


class SetupError(ValueError):
    """A game cannot be set up with these settings; the message says what is allowed."""


class NotYourTurnError(RuntimeError):
    """An action was sent while another seat decides."""


class GameOverError(RuntimeError):
    """An action was sent after the end of the game."""


# ------------------------------------------------------------------------------ setup
def assign_opponents(players: int, seat: int, opponents: Sequence[str], known: Sequence[str]) -> list[str]:
    """The controller of every seat: ``"you"`` at ``seat``, bots elsewhere.

    The other seats, in seat order, take the opponent names in order; a shorter list is
    cycled. Raises ``SetupError`` naming what is wrong and what is allowed.
    """
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 2 <= players <= 10:
        raise SetupError(f"players={players!r} is not allowed; allowed: an integer from 2 to 10")
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
        raise SetupError(f"seat={seat!r} is not allowed; allowed with {players} players: 0 to {players - 1}")
    names = [str(n).strip() for n in opponents if str(n).strip()]
    allowed = ", ".join(known)
    if not names:
        raise SetupError(f"no opponents given; name at least one bot; allowed: {allowed}")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SetupError(f"unknown opponent {unknown[0]!r}; allowed: {allowed}")
    if len(names) > players - 1:
        raise SetupError(
            f"{len(names)} opponents given for {players - 1} other seat(s); give at most {players - 1} "
            "(a shorter list is repeated round the table)"
        )
    out, i = [], 0
    for q in range(players):
        if q == seat:
            out.append("you")
        else:
            out.append(names[i % len(names)])
            i += 1
    return out


def agent_registry():
    """The ``agents`` package (its registry: ``make``, ``names``, ``describe``)."""
    import agents

    return agents


def _make_bot(name: str, seed: int, rules: RulesConfig):
    agents = agent_registry()
    kwargs = {"seed": seed}
    if rules.start_hp is not None:  # heuristics read HP as a fraction of the start HP
        try:
            return agents.make(name, start_hp=rules.hp, **kwargs)
        except TypeError:
            pass
    return agents.make(name, **kwargs)


# ------------------------------------------------------------------------------ session
@dataclass(frozen=True)
class Choice:
    """One legal decision, numbered from 1 in the terminal."""

    action: int
    kind: str
    label: str  # ActionTable.describe: the action space's own words
    text: str  # what it means here, in the game's words


@dataclass
class RoundSummary:
    """A resolved round for the log: ``RoundLog`` with the rule and Shadow cards named."""

    round: int
    rule: str
    epilogue: bool
    first_player: int
    seats: list[dict]
    events: list[Event] = field(default_factory=list)

    @classmethod
    def from_log(cls, log: RoundLog, db) -> "RoundSummary":
        seats = [dict(x, haunted_by=[shadow_label(db, s) for s in x["haunted_by"]]) for x in log.seats]
        return cls(log.round, rule_label(log.rule), log.epilogue, log.first_player, seats, list(log.events))


class GameSession:
    """One game: a person at ``seat`` and bots (registry names) in every other seat.

    ``opponents`` is cycled over the other seats in seat order. ``rules`` holds
    ``RulesConfig`` fields other than ``num_players`` (e.g. ``{"tie_rule": "earliest"}``).
    Construction plays the bots' decisions up to your first one.

    Without ``seed`` the game gets a secret one (``SECRET_SEED_BITS`` bits from
    ``secrets``): ``view()`` shows it only once the game is over. A chosen seed makes a
    *practice* game (its deal may have been worked out in advance): ``practice`` is
    true, the view shows the seed, and the record's header says ``"practice": true``.

    ``steps`` re-plays the actions of every seat of a game that was already under way
    (``recorder.lines``' ``action`` fields, in order) before the bots take over: how the
    server brings a game back after a restart. ``SetupError`` if one is not legal.
    """

    def __init__(self, players: int, seat: int, opponents: Sequence[str], seed: int | None = None,
                 rules: dict | None = None, cards=None, steps: Sequence[int] = (), practice: bool | None = None):
        self.controllers = assign_opponents(players, seat, opponents, agent_registry().names())
        self.players = int(players)
        self.seat = int(seat)
        chosen = seed is not None
        if seed is None:
            seed = secrets.randbits(SECRET_SEED_BITS)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise SetupError(f"seed={seed!r} is not allowed; allowed: a non-negative integer (or none)")
        self.seed = int(seed)
        self.practice = bool(chosen if practice is None else practice)
        fields = dict(rules or {})
        if "num_players" in fields and fields["num_players"] != self.players:
            raise SetupError(
                f"rules.num_players={fields['num_players']!r} disagrees with players={self.players}; "
                "leave num_players out of the rules"
            )
        fields["num_players"] = self.players
        try:
            self.rules = RulesConfig.from_dict(fields)
        except ConfigError as exc:
            raise SetupError(str(exc)) from None
        with KERNEL_LOCK:
            self.recorder = Recorder.new(self.rules, self.seed, cards=cards)
        self.recorder.lines[0]["practice"] = self.practice
        self.engine = self.recorder.engine
        self.db = self.engine.cards
        self.bots = {
            q: _make_bot(name, 1_000 * self.seed + q, self.rules)
            for q, name in enumerate(self.controllers) if q != self.seat
        }
        self.events: list[Event] = []
        self.rounds: list[RoundSummary] = []
        self.feed: list[tuple[str, object]] = []  # ("event", Event) | ("round", RoundSummary) | ("result", dict)
        self.round_no = 1
        self._round_events: list[Event] = []
        self._take_log()  # what the reset did (decisions taken before the first real one)
        for i, a in enumerate(steps):
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or int(a) not in self.legal_actions():
                raise SetupError(f"steps[{i}]={a!r} is not a legal action of this game at step {i}; "
                                 f"legal: {self.legal_actions()}")
            self._step(int(a))
        self.run_bots()

    # ------------------------------------------------------------------ state
    @property
    def state(self):
        return self.engine.state[0]

    @property
    def over(self) -> bool:
        return bool(self.state["done"])

    @property
    def actor(self) -> int:
        return -1 if self.over else int(self.state["actor"])

    @property
    def your_turn(self) -> bool:
        return not self.over and self.actor == self.seat

    @property
    def decision_number(self) -> int:
        """The number of the next decision (decisions taken so far, every seat's): an
        answer names it, so a repeated or stale answer can be told apart and refused."""
        return self.recorder.num_steps

    @property
    def steps(self) -> list[int]:
        """Every seat's actions so far, in order (``GameSession(..., steps=...)`` re-plays them)."""
        return [line["action"] for line in self.recorder.lines if "step" in line]

    @property
    def phase(self) -> str:
        return PHASE_NAMES[min(int(self.state["phase"]), len(PHASE_NAMES) - 1)]

    def legal_actions(self) -> list[int]:
        return self.engine.legal_actions(0)

    def name(self, q: int) -> str:
        return seat_name(q)

    # ------------------------------------------------------------------ choices
    def choices(self) -> list[Choice]:
        """The legal decisions of the seat that decides now, with their meaning."""
        if self.over:
            return []
        return [self._choice(a) for a in self.legal_actions()]

    def _choice(self, a: int) -> Choice:
        eng, db, r = self.engine, self.db, self.state
        kind, arg = eng.actions.decode(a)
        label = eng.actions.describe(a, db)
        P = self.players
        me = int(r["actor"])
        phase = self.phase
        if kind == "acquire_deck":
            text = f"Take the top card of the Living Deck ({int(r['deck_n'])} cards left)"
        elif kind == "acquire_market":
            d = int(r["market"][arg])
            text = f"Take {card_label(db, d)} from Market slot {arg}: {db.living[d].text}"
        elif kind == "card":
            c = db.living[arg]
            if phase == "choose_replacement":
                old = int(r["pend_card"])
                text = f"Replace {card_label(db, old)} with {card_label(db, arg)}: {c.text}"
            else:
                text = f"Play {card_label(db, arg)}" + (" face-down" if c.face_down else "") + f": {c.text}"
        elif kind == "target":
            t = (me + arg) % P
            who = f"{seat_name(t)} ({self.controllers[t]}, HP {int(r['hp'][t])})"
            if phase == "choose_victim":
                s = int(r["pend_shadow"])
                text = f"Haunt {who} with {shadow_label(db, s)}"
            else:
                c = int(r["pend_card"])
                text = f"Choose {who} for {card_label(db, c)}"
        elif kind == "market_slot":
            d = int(r["market"][arg])
            c = int(r["pend_card"])
            there = card_label(db, d) if d >= 0 else "(empty)"
            text = f"Choose Market slot {arg} ({there}) for {card_label(db, c)}"
        elif kind == "pass":
            text = "Pass: attach no Shadow card this turn"
        else:
            s = db.shadow[arg]
            text = f"Play the Shadow card {s.name} ({s.family}): {s.text}"
        return Choice(action=int(a), kind=kind, label=label, text=text)

    # ------------------------------------------------------------------ acting
    def act(self, action: int) -> None:
        """Your decision; then the bots play until your next decision or the end.

        Raises ``GameOverError``, ``NotYourTurnError`` or ``IllegalActionError`` (the
        game is then unchanged).
        """
        if self.over:
            raise GameOverError("the game is over; no more actions are accepted")
        if self.actor != self.seat:
            raise NotYourTurnError(
                f"it is {seat_name(self.actor)}'s decision, not yours (you are {seat_name(self.seat)})"
            )
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(0, action, self.legal_actions(), self.phase, self._describe)
        legal = self.legal_actions()
        if int(action) not in legal:
            raise IllegalActionError(0, int(action), legal, self.phase, self._describe)
        self._step(int(action))
        self.run_bots()

    def _describe(self, a: int) -> str:
        try:
            return self.engine.describe_action(a)
        except ValueError:
            return "out of range"

    def run_bots(self) -> None:
        """Let the bots decide until it is your decision or the game is over."""
        for _ in range(MAX_BOT_STEPS):
            if self.over or self.actor == self.seat:
                return
            q = self.actor
            bot = self.bots[q]
            with KERNEL_LOCK:
                obs = self.engine.observe([q])[0]
                mask = self.engine.legal_mask()[0].copy()
                a = int(bot.act(obs, mask))
            if a < 0 or a >= mask.size or not mask[a]:  # a misbehaving bot: take the first legal action
                self._note(q, f"{seat_name(q)} ({self.controllers[q]}) chose an illegal action {a}; "
                              "the first legal action was taken instead")
                a = int(np.flatnonzero(mask)[0])
            self._step(a)
        raise RuntimeError(f"the bots took more than {MAX_BOT_STEPS} decisions without finishing")

    def _note(self, seat: int, text: str) -> None:
        self._add_event(Event("note", seat, 0, 0, self.round_no, False, False, text, text))

    def _add_event(self, ev: Event) -> None:
        self.events.append(ev)
        self._round_events.append(ev)
        self.feed.append(("event", ev))

    def _step(self, action: int) -> None:
        with KERNEL_LOCK:
            self.recorder.step(action)
        self._take_log()

    def _take_log(self) -> None:
        """Move the latest step's events (and the rounds it resolved) into the log."""
        for kind, item in self.recorder.last_items:
            if kind == "event":
                self.round_no = item.round
                self._add_event(item)
            else:
                summary = RoundSummary.from_log(item, self.db)
                self.rounds.append(summary)
                self.feed.append(("round", summary))
                self._round_events = []
        if self.over and not any(kind == "result" for kind, _ in self.feed):
            self.feed.append(("result", self.result()))

    # ------------------------------------------------------------------ results
    def result(self) -> dict | None:
        if not self.over:
            return None
        r = self.state
        P = self.players
        winners = [q for q in range(P) if bool(r["winners"][q])]
        rewards = [round(float(x), 6) for x in r["final_rewards"][:P]]
        return {
            "winners": winners,
            "rewards": rewards,
            "you_won": self.seat in winners,
            "your_reward": rewards[self.seat],
            "rounds": len([s for s in self.rounds if not s.epilogue]),
        }

    def record_text(self) -> str:
        return self.recorder.dumps()

    def save(self, path) -> Path:
        return self.recorder.save(path)

    # ------------------------------------------------------------------ views
    def card_info(self, d: int) -> dict:
        c = self.db.living[int(d)]
        return {"design": int(d), "name": c.name, "value": int(c.value), "text": c.text,
                "family": c.family, "keywords": list(c.keywords), "face_down": bool(c.face_down)}

    def shadow_info(self, s: int) -> dict:
        c = self.db.shadow[int(s)]
        return {"design": int(s), "name": c.name, "text": c.text, "counterplay": c.counterplay or "",
                "family": c.family}

    def view(self) -> dict:
        """The game as ``self.seat`` sees it (R-12.3): public facts, your own hands only."""
        eng, db, r = self.engine, self.db, self.state
        P = self.players
        me = self.seat
        done = self.over
        actor = self.actor
        hp0 = int(eng.cfg[C_HP])
        choices = self.choices() if self.your_turn else []
        by_action = {c.action: c for c in choices}
        ranges = eng.actions.ranges
        seats = []
        for q in range(P):
            d = int(r["played"][q])
            played = None
            if d >= 0:
                hidden = bool(r["face_down"][q]) and q != me
                played = {"card": None if hidden else self.card_info(d), "face_down": bool(r["face_down"][q])}
            t = int(r["target"][q])
            acq = int(r["acquired"][q])
            took_card = int(r["acq_card"][q]) if acq == 2 else -1
            target_action = None
            if choices and by_action:
                off = (q - me) % P
                if off:
                    a = ranges["target"].start + off - 1
                    target_action = a if a in by_action else None
            seats.append({
                "seat": q,
                "name": seat_name(q),
                "controller": self.controllers[q],
                "is_you": q == me,
                "hp": int(r["hp"][q]),
                "max_hp": hp0,
                "alive": bool(r["alive"][q]),
                "hand_count": int(r["hand_n"][q]),
                "shadow_count": int(r["shadow_n"][q]),
                "took": {0: None, 1: "deck", 2: "market"}.get(acq),
                "took_card": self.card_info(took_card) if took_card >= 0 else None,
                "played": played,
                "target": t if t >= 0 and d >= 0 else None,
                "haunted_by": [self.shadow_info(r["attached"][q, i]) for i in range(int(r["attached_n"][q]))],
                "first_player": (not done) and q == int(r["first_player"]),
                "deciding": q == actor,
                "has_acted": bool(r["acted"][q]),
                "target_action": target_action,
            })
        market = []
        for k in range(int(eng.cfg[C_MARKET])):
            d = int(r["market"][k])
            act = None
            for kind in ("acquire_market", "market_slot"):
                a = ranges[kind].start + k
                if a in by_action:
                    act = a
            market.append({"slot": k, "card": self.card_info(d) if d >= 0 else None, "action": act})
        hand = []
        for d in range(db.n_living):
            n = int(r["hand"][me, d])
            if n > 0:
                a = ranges["card"].start + d
                hand.append({**self.card_info(d), "count": n, "action": a if a in by_action else None})
        shadow_hand = []
        for s in range(db.n_shadow):
            n = int(r["shadow_hand"][me, s])
            if n > 0:
                a = ranges["shadow"].start + s
                shadow_hand.append({**self.shadow_info(s), "count": n, "action": a if a in by_action else None})
        deck_action = ranges["acquire_deck"].start if ranges["acquire_deck"].start in by_action else None
        pass_action = ranges["pass"].start if ranges["pass"].start in by_action else None
        decision = None
        if not done:
            decision = {"seat": actor, "name": seat_name(actor), "controller": self.controllers[actor],
                        "phase": self.phase, "prompt": phase_text(eng, 0, viewer=me)}
        return {
            "seat": me,
            "players": P,
            "seed": self.seed if (done or self.practice) else None,
            "practice": self.practice,
            "decision_number": self.decision_number,
            "controllers": list(self.controllers),
            "rules": self.rules.to_dict(),
            "round": self.rounds[-1].round if done and not self._round_events and self.rounds else self.round_no,
            "status": "over" if done else ("your_turn" if self.your_turn else "waiting"),
            "decision": decision,
            "table": {
                "rule": rule_label(r["rule"]),
                "living_deck": int(r["deck_n"]),
                "living_discard": int(r["discard_n"]),
                "shadow_deck": int(r["shadow_deck_n"]),
                "shadow_discard": int(r["shadow_discard_n"]),
                "market": market,
                "first_player": int(r["first_player"]),
                "epilogue": bool(r["epilogue"]),
                "deck_action": deck_action,
                "pass_action": pass_action,
                "seats": seats,
            },
            "hand": hand,
            "shadow_hand": shadow_hand,
            "legal_actions": [{"action": c.action, "kind": c.kind, "label": c.label, "text": c.text} for c in choices],
            "log": [self._event_view(e) for e in self._round_events],
            "rounds": [self._round_view(s) for s in self.rounds],
            "result": self.result(),
        }

    def _event_view(self, e: Event) -> dict:
        return {"round": e.round, "seat": e.seat, "text": e.text_for(self.seat), "forced": e.forced, "kind": e.kind}

    def _round_view(self, s: RoundSummary) -> dict:
        seats = []
        for x in s.seats:
            y = dict(x)
            y["name"] = seat_name(x["seat"])
            y["card"] = self.card_info(x["card"]) if x["card"] is not None else None
            seats.append(y)
        return {"round": s.round, "rule": s.rule, "epilogue": s.epilogue, "first_player": s.first_player,
                "seats": seats, "events": [self._event_view(e) for e in s.events]}


# ------------------------------------------------------------------------------ terminal
def _round_text(session: GameSession, s: RoundSummary) -> str:
    db = session.db
    title = f"Round {s.round} resolved · rule: {s.rule}" + (" · epilogue (display only)" if s.epilogue else "")
    header = ["seat", "player", "card", "score", "damage", "HP"]
    rows = []
    for x in s.seats:
        q = x["seat"]
        card = card_label(db, x["card"]) if x["card"] is not None else "-"
        if x["revealed"]:
            card += " (was face-down)"
        if x["target"] is not None:
            card += f" -> {seat_name(x['target'])}"
        if x["haunted_by"]:
            card += " · haunted by " + ", ".join(x["haunted_by"])
        hp = str(x["hp"]) + (" (dies: now a Ghost)" if x["died"] else ("" if x["alive"] else " (Ghost)"))
        who = seat_name(q) + (" (you)" if q == session.seat else f" ({session.controllers[q]})")
        rows.append([str(q), who + (" *" if q == s.first_player and x["alive"] else ""), card,
                     "-" if x["score"] is None else str(x["score"]), str(x["damage"]), hp])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["", "=" * len(title), title, "=" * len(title)]
    for row in [header] + rows:
        lines.append("  ".join(c.rjust(widths[i]) if i in (0, 3, 4) else c.ljust(widths[i])
                               for i, c in enumerate(row)).rstrip())
    lines.append("(* First Player next round)")
    return "\n".join(lines)


def _result_text(session: GameSession, res: dict) -> str:
    winners = ", ".join(
        seat_name(q) + (" (you)" if q == session.seat else f" ({session.controllers[q]})") for q in res["winners"]
    ) or "nobody"
    verdict = "You win!" if res["you_won"] and len(res["winners"]) == 1 else (
        "You share the win." if res["you_won"] else "You lose.")
    rewards = ", ".join(f"{seat_name(q)} {x:+.3f}" for q, x in enumerate(res["rewards"]))
    return f"\nGAME OVER after {res['rounds']} round(s). Winner(s): {winners}. {verdict}\nRewards: {rewards}"


def _decision_text(session: GameSession, choices: list[Choice]) -> str:
    db = session.db
    r = session.state
    me = session.seat
    lines = ["", "-" * 78, render_text(session.engine, 0, viewer=me).rstrip()]
    haunt = [int(r["attached"][me, i]) for i in range(int(r["attached_n"][me]))]
    if haunt:
        lines.append("Shadow cards attached to you:")
        for s in haunt:
            c = db.shadow[s]
            lines.append(f"  - {c.name} ({c.family}): {c.text}")
    hand = [(d, int(r["hand"][me, d])) for d in range(db.n_living) if int(r["hand"][me, d]) > 0]
    if hand:
        lines.append("Your hand:")
        for d, n in hand:
            c = db.living[d]
            lines.append(f"  - {card_label(db, d)}{' x' + str(n) if n > 1 else ''}: {c.text}")
    shand = [(s, int(r["shadow_hand"][me, s])) for s in range(db.n_shadow) if int(r["shadow_hand"][me, s]) > 0]
    if shand:
        lines.append("Your Shadow hand:")
        for s, n in shand:
            c = db.shadow[s]
            lines.append(f"  - {c.name}{' x' + str(n) if n > 1 else ''} ({c.family}): {c.text}")
    you = "You are a Ghost. " if not bool(r["alive"][me]) else ""
    lines.append("")
    lines.append(f"{you}Your decision (round {session.round_no}): {phase_text(session.engine, 0, viewer=me)}")
    lines.extend(_choices_text(choices))
    return "\n".join(lines)


def _choices_text(choices: list[Choice]) -> list[str]:
    return [f"  {i}) {c.text}   [{c.label}]" for i, c in enumerate(choices, start=1)]


def play_terminal(players: int, seat: int, opponents: Sequence[str], seed: int | None = None,
                  save: str | Path | None = None, rules: dict | None = None,
                  input_fn: Callable[[str], str] = input, out: Callable[[str], None] = print) -> GameSession:
    """Play one game in the terminal; returns the session (finished, or stopped with ``q``).

    Raises ``SetupError`` for bad settings before anything is played.
    """
    out("Setting up the game (the first run compiles the rules engine, about a minute)...")
    session = GameSession(players, seat, opponents, seed=seed, rules=rules)
    seats = ", ".join(
        f"{seat_name(q)}: {'you' if q == session.seat else session.controllers[q]}" for q in range(session.players)
    )
    out(f"R.I.P. Market · {session.players} players · seed {session.seed} · {seats}")
    out("At each decision enter the number of your choice (q quits, t shows the table again).")
    shown = 0
    stopped = False
    try:
        while True:
            for kind, item in session.feed[shown:]:
                if kind == "event":
                    out(f"  [round {item.round}] {item.text_for(session.seat)}")
                elif kind == "round":
                    out(_round_text(session, item))
            shown = len(session.feed)
            if session.over:
                out("")
                out(render_text(session.engine, 0, viewer=session.seat).rstrip())
                out(_result_text(session, session.result()))
                break
            choices = session.choices()
            out(_decision_text(session, choices))
            prompt = f"Your choice [1-{len(choices)}]: "
            while True:
                try:
                    raw = input_fn(prompt)
                except EOFError:
                    raw = None
                if raw is None:
                    out("\nInput closed: the game stops here.")
                    stopped = True
                    break
                text = raw.strip().lower()
                if text in ("q", "quit", "exit"):
                    out("You left the game.")
                    stopped = True
                    break
                if text in ("t", "table"):
                    out(_decision_text(session, choices))
                    continue
                try:
                    n = int(text)
                except ValueError:
                    n = 0
                if 1 <= n <= len(choices):
                    break
                shown_raw = raw.strip() or "(nothing)"
                out(f"{shown_raw!s} is not a choice here. Enter a number from 1 to {len(choices)}:")
                out("\n".join(_choices_text(choices)))
            if stopped:
                break
            session.act(choices[n - 1].action)
    finally:
        if save is not None:
            path = session.save(save)
            status = "finished" if session.over else "unfinished"
            out(f"Saved the game record ({status}) to {path}; replay it with: ripmarket replay {path}")
    sys.stdout.flush()
    return session
