"""The web page's R.I.P. Market session: one game between one person and the bots.

``GameSession`` holds one game between one person (``seat``) and registered agents in
every other seat, with the detailed views ``ripmarket serve`` (``ripmarket_env.app.server``)
sends to its page (the terminal game of every game is ``ripmarket_env.app.play`` over
``ripmarket_env.app.session.TableSession``):

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ripmarket_env.games.ripmarket.config import C_HP, C_MARKET, ConfigError, RulesConfig
from ripmarket_env.games.ripmarket.engine import IllegalActionError
from ripmarket_env.games.ripmarket.events import Event, RoundLog
from ripmarket_env.games.ripmarket.state import PHASE_NAMES
from ripmarket_env.app.seat_session import (  # noqa: F401 - SECRET_SEED_BITS: this module's name too
    KERNEL_LOCK,
    SECRET_SEED_BITS,
    SeatSession,
    game_seed,
)
from ripmarket_env.app.narrate import bot_level, round_story, rule_card, rule_text, standings
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
    "default_opponents",
]

#: The default AI opponent of the terminal game and the web page: the trained bot for
#: every table (2-10 players, ``agents/checkpoints/ppo.zip``) checking its favourite
#: moves one turn ahead (``ppo-lookahead``, under 5 ms a move at the 95th percentile).
#: Where it is not installed, ``ppo`` alone; where neither can play (the cards in play are
#: not the ones they were trained on), the heuristics take their place.
DEFAULT_BOTS = ("ppo-lookahead", "ppo")
FALLBACK_BOTS = ("greedy", "survivor", "shark", "hoarder", "trickster")

MAX_BOT_STEPS = 100_000

#: SECRET_SEED_BITS (seat_session's, used by ``game_seed``): the bits of the seed a game gets
#: when none is chosen (``secrets.randbits``): far more than can be searched, and drawn from
#: the OS's cryptographic source, so the deal cannot be predicted from it or worked out in advance.

# KERNEL_LOCK (seat_session's): every call into the engine kernels, and every bot decision,
# takes this lock (numba's threading layer may not be thread-safe).


class SetupError(ValueError):
    """A game cannot be set up with these settings; the message says what is allowed."""


class NotYourTurnError(RuntimeError):
    """An action was sent while another seat decides."""


class GameOverError(RuntimeError):
    """An action was sent after the end of the game."""


# ------------------------------------------------------------------------------ setup
def assign_opponents(players: int, seat: int, opponents: Sequence[str], known: Sequence[str],
                     refused: Mapping[str, str] | None = None) -> list[str]:
    """The controller of every seat of an R.I.P. Market table (2-10 players):
    ``session.assign_opponents`` raising this module's ``SetupError``."""
    from ripmarket_env.app.session import assign_opponents as assign

    return assign(players, seat, opponents, known, refused, 2, 10, SetupError)


def agent_registry():
    """The ``agents`` package (its registry: ``make``, ``names``, ``describe``)."""
    import agents

    return agents


def unavailable_bots(cards=None) -> dict[str, str]:
    """The registered bots that cannot play the card database ``cards`` (None: the packaged
    cards), with the reason: trained networks of other cards, such as the first edition's
    ``ppo-6p`` stages on the second edition's cards (``agents.policy.card_conflict``)."""
    from agents.policy import card_conflict

    out = {}
    for name in agent_registry().names():
        reason = card_conflict(name, cards)
        if reason is not None:
            out[name] = reason
    return out


def default_opponents(players: int, cards=None) -> list[str]:
    """The opponents of a game set up without naming them: the first of ``DEFAULT_BOTS``
    that can play ``cards`` (None: the packaged cards) at every other seat, else the
    heuristics."""
    playable = playable_bots(cards)
    for name in DEFAULT_BOTS:
        if name in playable:
            return [name]
    return list(FALLBACK_BOTS[: max(players - 1, 1)])


def playable_bots(cards=None) -> list[str]:
    """The registered bots that can play the card database ``cards`` (None: the packaged cards)."""
    refused = unavailable_bots(cards)
    return [n for n in agent_registry().names() if n not in refused]


def _make_bot(name: str, seed: int, rules: RulesConfig, cards=None):
    """The bot, told the game's cards and start HP when it takes them (the heuristics and
    search do; random and the trained networks do not)."""
    agents = agent_registry()
    kwargs = {"seed": seed}
    extras = []
    if cards is not None:
        extras.append("cards")
    if rules.start_hp is not None:  # heuristics read HP as a fraction of the start HP
        extras.append("start_hp")
    values = {"cards": cards, "start_hp": rules.hp}
    for k in range(len(extras), 0, -1):  # every extra, then fewer, then none
        try:
            return agents.make(name, **{x: values[x] for x in extras[:k]}, **kwargs)
        except TypeError:
            continue
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
        seats = [dict(x, haunted_by=[shadow_label(db, s) for s in x["haunted_by"]],
                      haunted_by_designs=list(x["haunted_by"])) for x in log.seats]
        return cls(log.round, rule_label(log.rule), log.epilogue, log.first_player, seats, list(log.events))


class GameSession(SeatSession):
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
        refused = unavailable_bots(cards)
        self.controllers = assign_opponents(players, seat, opponents,
                                            [n for n in agent_registry().names() if n not in refused], refused)
        self.players = int(players)
        self.seat = int(seat)
        self.seed, chosen = game_seed(seed, SetupError)
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
            self.recorder = Recorder.new(self.rules, self.seed, cards=cards,
                                         controllers=["person" if c == "you" else c for c in self.controllers])
        self.recorder.lines[0]["practice"] = self.practice
        self.engine = self.recorder.engine
        self.db = self.engine.cards
        self.bots = {
            q: _make_bot(name, 1_000 * self.seed + q, self.rules, cards=cards)
            for q, name in enumerate(self.controllers) if q != self.seat
        }
        self.events: list[Event] = []
        self.rounds: list[RoundSummary] = []
        self.feed: list[tuple[str, object]] = []  # ("event", Event) | ("round", RoundSummary) | ("result", dict)
        self.round_no = 1
        self._round_events: list[Event] = []
        self._mark = 0  # where in the feed the bots' turns since your latest decision begin
        self._stories: list[list[dict]] = []
        self._take_log()  # what the reset did (decisions taken before the first real one)
        # as act() does: what follows your decision is "recent"
        self.replay(steps, SetupError, on_yours=self._mark_yours)
        self.run_bots()

    # ------------------------------------------------------------------ state
    # state, over, actor, your_turn, decision_number, steps, legal_actions: SeatSession's
    @property
    def phase(self) -> str:
        return PHASE_NAMES[min(int(self.state["phase"]), len(PHASE_NAMES) - 1)]

    def name(self, q: int) -> str:
        return seat_name(q)

    def label(self, q: int) -> str:
        """A seat as the person reads it: ``"you"`` or ``"player_2 (greedy)"``."""
        return "you" if q == self.seat else f"{seat_name(q)} ({self.controllers[q]})"

    def event_text(self, e: Event) -> str:
        """An event as your seat may see it (R-12.3). A decision the engine took alone for
        a bot reads like any other move; one it took for you says why you were not asked."""
        text = e.private if e.seat == self.seat else e.public
        if e.forced and e.seat == self.seat:
            if e.kind == "pass":
                return (f"{text}: your Ghost turn passed by itself, since you hold no Shadow card "
                        "you could attach")
            return f"{text} (your only option, so you were not asked)"
        return text

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
                text = (f"Replace {card_label(db, old)} with {card_label(db, arg)}"
                        + (" face-down" if c.face_down else "") + f": {c.text}")
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
        self._mark = len(self.feed)
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

    def _log_size(self) -> int:
        return len(self.feed)  # SeatSession's _mark indexes the feed

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
                self._stories.append(round_story(summary, self.db, self.label))
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
        end = next((e.public for e in reversed(self.events) if e.kind == "game_over"), "Game over")
        table = standings(P, self.events, self.rounds, self._stories, self.label)
        for row in table:
            q = row["seat"]
            row.update(controller=self.controllers[q], level=bot_level(self.controllers[q]),
                       hp=int(r["hp"][q]), alive=bool(r["alive"][q]))
        return {
            "winners": winners,
            "rewards": rewards,
            "you_won": self.seat in winners,
            "your_reward": rewards[self.seat],
            "rounds": len([s for s in self.rounds if not s.epilogue]),
            "end": end,
            "standings": table,
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
                "level": bot_level(self.controllers[q]),
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
            "recent": self.recent(),
            "active_rule": self.rule_view(),
            "rounds": [self._round_view(s) for s in self.rounds],
            "result": self.result(),
        }

    def _event_view(self, e: Event) -> dict:
        return {"round": e.round, "seat": e.seat, "text": self.event_text(e), "forced": e.forced_for(self.seat),
                "kind": e.kind}

    def recent(self) -> list[dict]:
        """What happened since your latest decision, in order: events, ``round`` markers
        (index into ``rounds``) and the ``result``; the page plays it back one move at a time."""
        out = []
        n_round = sum(1 for k, _ in self.feed[: self._mark] if k == "round")
        for kind, item in self.feed[self._mark:]:
            if kind == "event":
                out.append({"type": "event", **self._event_view(item)})
            elif kind == "round":
                out.append({"type": "round", "index": n_round, "round": item.round})
                n_round += 1
            else:
                out.append({"type": "result"})
        return out

    def rule_view(self) -> dict:
        """The active rule named by the card that set it (``Aftershock: Earthquake (...)``)."""
        rule = rule_label(self.state["rule"])
        card = rule_card(self._round_events, self.db) if rule != "none" else None
        return {"name": rule, "card": card, "text": rule_text(rule, card)}

    def _round_view(self, s: RoundSummary) -> dict:
        seats = []
        for x in s.seats:
            y = dict(x)
            y["name"] = seat_name(x["seat"])
            y["card"] = self.card_info(x["card"]) if x["card"] is not None else None
            y.pop("haunted_by_designs", None)
            seats.append(y)
        i = self.rounds.index(s)
        card = rule_card(s.events, self.db) if s.rule != "none" else None
        return {"round": s.round, "rule": s.rule, "rule_card": card, "rule_text": rule_text(s.rule, card),
                "epilogue": s.epilogue, "first_player": s.first_player,
                "seats": seats, "events": [self._event_view(e) for e in s.events], "story": self._stories[i]}
