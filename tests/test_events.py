"""The engine's event log (ripmarket_env/games/ripmarket/events.py): what each step did.

Rules scenarios check that the kernels log the right events where the rules say things
happen (rule IDs from docs/RULES.md in each test's name), random play checks the log's
bounds and its agreement with the state, and every viewer's text is checked for hidden
information (R-12.3).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ripmarket_env.games.ripmarket.cards.registry import RULES
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.events import ACTION_KINDS, EVENT_CODES, EVENT_KINDS, Event, GameLog, decode_rows
from ripmarket_env.games.ripmarket.state import MAX_EVENTS
from ripmarket_env.envs.record import Recorder
from ripmarket_env.games.ripmarket.cards.loader import load_cards
from scenario import Table, serial

FIRST = load_cards("first-edition")

HIDDEN_KINDS = {"acquire_deck", "draw", "shadow_draw", "play", "replace"}  # replace: face-down (R-7.12)


@pytest.fixture(autouse=True)
def _serial():
    with serial():
        yield


class LogTable(Table):
    """A scenario table that keeps every event of every step (and of direct damage)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.events: list[Event] = []
        self.rounds = []  # GameLog round summaries

    def _take(self, events):
        self.events += events
        self.rounds += self.glog.feed(events)

    def start_round(self, first: int = 0):
        self.glog = GameLog(self.eng)  # the arranged table
        super().start_round(first)
        self._take(self.eng.events(0))
        return self

    def step(self, action: int):
        super().step(action)
        self._take(self.eng.events(0))
        return self

    def direct_damage(self, seat: int, amount: int = 1):
        k = len(self.eng.events(0))
        super().direct_damage(seat, amount)
        self._take(self.eng.events(0)[k:])
        return self

    def of(self, kind: str, seat: int | None = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (seat is None or e.seat == seat)]


def log_table(n=4, first=0, rules=None, cards=None, **arrange) -> LogTable:
    # the hand-arranged rounds were written with the first edition's numbers (docs/BALANCE.md)
    t = LogTable(n, cards=FIRST if cards is None else cards, **(rules or {}))
    t.arrange(**arrange)
    t.start_round(first)
    return t


def one_round(plays: dict, n=4, first=0, haunts=None, rules=None, **arrange) -> LogTable:
    hands = {p: [v if isinstance(v, str) else v["card"]] for p, v in plays.items()}
    hands.update(arrange.pop("hands", {}))
    t = log_table(n, first=first, rules=rules, hands=hands, **arrange)
    t.play_round(plays, haunts=haunts)
    return t


# ------------------------------------------------------------------ the kinds table
def test_event_kind_table_is_a_bijection_and_matches_the_kernel_codes():
    from ripmarket_env.games.ripmarket import kernels as K

    assert len(EVENT_KINDS) == len(EVENT_CODES)
    for code, name in EVENT_KINDS.items():
        assert getattr(K, "EV_" + name.upper()) == code


def test_unknown_event_code_is_rejected_with_the_known_range():
    with pytest.raises(ValueError, match="unknown event code 99"):
        decode_rows(np.array([[99, 0, 0, 0]]), 1, Engine(RulesConfig(num_players=2)).cards)


def test_engine_events_rejects_a_bad_game_index():
    eng = Engine(RulesConfig(num_players=2), batch_size=2)
    with pytest.raises(ValueError, match=r"game index in 0\.\.1"):
        eng.events(2)
    with pytest.raises(ValueError, match="game must be"):
        eng.events("0")


# ------------------------------------------------------------------ rules scenarios
def test_r_4_7_and_r_7_8_face_down_play_is_hidden_until_its_reveal():
    """R-4.7: a face-up play is public; R-7.8: a face-down play names no card to the other
    seats, and its reveal at the start of resolution names it to everyone."""
    t = log_table(hands={0: ["Veiled Blade"], 1: ["Merchant"], 2: ["Tycoon"], 3: ["Relief"]},
                  deck_top=["Stockpile", "Mimic", "Relief", "Grave Digger"])
    t.take_deck().play("Veiled Blade")
    blade = t.lid("Veiled Blade")
    (play,) = t.of("play", 0)
    assert (play.a, play.b, play.hidden) == (blade, 1, True)
    assert "Veiled Blade" in play.text_for(0) and "Veiled Blade" in play.text_for("god")
    for viewer in (1, 2, 3, None):
        assert play.text_for(viewer) == "player_0 plays a card face-down"
        assert play.visible_to(viewer) == (None, 1)
        assert play.to_dict(viewer)["a"] is None
    t.play_round({1: "Merchant", 2: "Tycoon", 3: "Relief"})
    (reveal,) = t.of("reveal", 0)
    assert (reveal.a, reveal.b, reveal.hidden) == (blade, 1, False)
    for viewer in (0, 1, 2, 3, None):
        assert "Veiled Blade" in reveal.text_for(viewer)
    (tycoon,) = t.of("play", 2)
    assert not tycoon.hidden and all("Tycoon" in tycoon.text_for(v) for v in (0, 1, 3, None))
    # the reveal comes after the resolution starts and before the scores (R-8.1)
    kinds = [e.kind for e in t.events]
    assert kinds.index("resolve") < kinds.index("reveal") < kinds.index("score")


def test_r_4_1_deck_acquisition_and_r_2_13_draws_are_known_to_their_seat_only():
    """R-4.1 / R-12.3: the card taken from the deck and cards drawn by Merchant (R-2.13) are
    named for their seat; a Market take is public (R-12.3: any card taken from the Market)."""
    t = log_table(hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Relief"], 3: ["Spite"]},
                  market=["Closer", "Mimic", "Fire Sale"], deck_top=["Stockpile", "Last Stand"])
    t.take_deck().play("Merchant")
    (acq,) = t.of("acquire_deck", 0)
    (draw,) = t.of("draw", 0)
    assert (acq.a, draw.a) == (t.lid("Stockpile"), t.lid("Last Stand"))
    assert "Stockpile" in acq.text_for(0) and "Last Stand" in draw.text_for(0)
    assert acq.text_for(1) == "player_0 takes the top card of the Living Deck"
    assert draw.text_for(2) == "player_0 draws a card"
    t.take_market(0)
    (take,) = t.of("acquire_market", 1)
    assert (take.a, take.b, take.hidden) == (t.lid("Closer"), 0, False)
    assert all("Closer" in take.text_for(v) for v in (0, 2, 3, None))


def test_r_5_1_shadow_draw_is_hidden_and_r_5_6_the_attached_shadow_card_is_public():
    """R-5.1: the Ghost's turn draw is known to the Ghost only; R-5.2/R-5.6: the attached
    card, its victim and the Ghost are public, and the round summary lists it."""
    t = log_table(hands={0: ["Merchant"], 2: ["Tycoon"], 3: ["Relief"]}, ghosts={1: ["Possession"]},
                  shadow_deck_top=["Blight"])
    t.play_round({0: "Merchant", 2: "Tycoon", 3: "Relief"}, haunts={1: ("Possession", 2)})
    (draw,) = t.of("shadow_draw", 1)
    assert (draw.a, draw.hidden) == (t.sid("Blight"), True)
    assert "Blight" in draw.text_for(1)
    assert all(draw.text_for(v) == "player_1 draws a Shadow card" for v in (0, 2, 3, None))
    (haunt,) = t.of("haunt", 1)
    assert (haunt.a, haunt.b, haunt.hidden) == (2, t.sid("Possession"), False)
    assert all("Possession" in haunt.text_for(v) and "player_2" in haunt.text_for(v) for v in (0, 2, 3, None))
    (summary,) = t.rounds
    assert summary.seats[2]["haunted_by"] == [t.sid("Possession")]
    assert summary.seats[2]["score"] == 8 - 3  # Tycoon (8), even: Possession -3 (R-13.5)


def test_r_2_23_shadow_triggers_and_their_random_discard_are_logged():
    """R-2.23 / R-7.11: Pickpocket and Cold Hands on seat 3 fire when it plays after a deck
    acquisition, in attach order; the discarded card goes to the public discard pile."""
    t = log_table(5, hands={0: ["Merchant"], 3: ["Veiled Blade", "Relief"], 4: ["Tycoon"]},
                  ghosts={1: ["Pickpocket", "Pickpocket"], 2: ["Cold Hands", "Cold Hands"]},
                  deck_top=["Stockpile", "Mimic", "Relief"])
    t.turn("Merchant").haunt("Pickpocket", 3).haunt("Cold Hands", 3)
    t.take_deck()
    t.play("Veiled Blade")
    triggers = t.of("trigger", 3)
    assert [e.a for e in triggers] == [t.sid("Pickpocket"), t.sid("Cold Hands")]
    (disc,) = t.of("discard", 3)
    assert disc.a == t.lid("Relief") and not disc.hidden
    kinds = [e.kind for e in t.events if e.seat == 3]
    assert kinds.index("play") < kinds.index("trigger") < kinds.index("discard")


def test_r_2_18_exorcism_discards_each_attached_shadow_card():
    """R-2.18: Exorcist sends every Shadow card attached to its player to the Shadow discard;
    the round summary no longer lists them."""
    t = log_table(hands={0: ["Merchant"], 2: ["Exorcist"], 3: ["Relief"]}, ghosts={1: ["Possession", "Blight"]})
    t.play_round({0: "Merchant", 2: "Exorcist", 3: "Relief"}, haunts={1: ("Blight", 2)})
    (ex,) = t.of("exorcise", 2)
    assert ex.a == t.sid("Blight")
    (summary,) = t.rounds
    assert summary.seats[2]["haunted_by"] == []


def test_r_7_4_rule_change_is_logged_and_named_in_the_summary():
    """R-2.12 / R-7.4: Low Tide sets the round's rule; the summary carries it."""
    t = one_round({0: "Low Tide", 1: "Merchant", 2: "Tycoon", 3: "Relief"})
    (rule,) = t.of("rule", 0)
    assert rule.a == RULES["low_tide"]
    (summary,) = t.rounds
    assert summary.rule == RULES["low_tide"] == int(t.r["last_rule"])


def test_r_2_17_direct_damage_logs_the_attack_and_the_hp_loss():
    """R-2.17: Backstab's victim loses 1 HP at once; the log names attacker, victim and the
    HP left, and the state agrees."""
    t = log_table(hands={0: ["Tycoon"], 1: ["Backstab"], 2: ["Merchant"], 3: ["Relief"]}, hp={1: 1})
    t.turn("Tycoon")
    t.turn("Backstab", target=2)
    (attack,) = t.of("attack", 1)
    (hit,) = t.of("hit", 2)
    assert (attack.a, attack.b) == (2, t.lid("Backstab"))
    assert (hit.a, hit.b) == (1, t.hp[2]) == (1, 1)


def test_r_8_2_r_8_4_r_6_1_round_damage_deaths_and_ghost_draws():
    """R-8.2 / R-8.4 / R-6.1: both lowest seats take 1 damage, then die in turn order from
    the First Player (3 then 0), each drawing 2 Shadow cards hidden from the others."""
    t = one_round({0: "Stockpile", 1: "Merchant", 2: "Tycoon", 3: "Grave Digger"}, first=2, hp={0: 1, 3: 1},
                  shadow_deck_top=["Possession", "Possession", "Blight", "Blight"])
    assert [(e.seat, e.a, e.b) for e in t.of("damage")] == [(0, 1, 0), (3, 1, 0)]
    assert [e.seat for e in t.of("death")] == [3, 0]
    assert t.of("death", 3)[0].a == t.of("death", 0)[0].a  # eliminated at the same moment
    draws = t.of("shadow_draw")
    assert [(e.seat, e.a) for e in draws] == [(3, t.sid("Possession"))] * 2 + [(0, t.sid("Blight"))] * 2
    assert all("Possession" not in e.text_for(0) and "Blight" not in e.text_for(3) for e in draws)
    (summary,) = t.rounds
    assert [x["died"] for x in summary.seats] == [True, False, False, True]
    assert [x["damage"] for x in summary.seats] == t.damage
    assert [x["hp"] for x in summary.seats] == t.hp
    assert [x["score"] for x in summary.seats] == t.scores


def test_r_8_3_deflection_chain_is_logged_hop_by_hop():
    """R-8.3: seat 0's damage goes to seat 1, whose own Deflection passes it to seat 2."""
    t = one_round({0: {"card": "Deflection", "target": 1}, 1: {"card": "Deflection", "target": 2},
                   2: "Tycoon", 3: {"card": "Spite", "target": 0}})
    assert [(e.seat, e.a) for e in t.of("deflect")] == [(0, 1), (1, 2)]
    assert [(e.seat, e.a) for e in t.of("damage")] == [(2, 1)]
    assert [(e.seat, e.a) for e in t.of("target")] == [(0, 1), (1, 2), (3, 0)]


def test_r_12_1_decisions_the_engine_takes_are_marked_forced():
    """R-12.1: a Ghost seated after every living player has no victim and can only pass:
    the engine passes for it, and the log tells that seat so (R-12.3: only that seat);
    agent decisions are not marked."""
    t = one_round({0: "Merchant", 1: "Tycoon", 2: "Relief"}, ghosts={3: ["Possession"]})
    (pas,) = t.of("pass", 3)
    assert pas.forced and pas.text_for(3).endswith("(only choice)") and pas.forced_for(3)
    assert pas.text_for("god").endswith("(only choice)") and pas.to_dict(3)["forced"]
    for viewer in (0, 1, 2, None):
        assert pas.text_for(viewer) == "player_3 passes" and not pas.to_dict(viewer)["forced"]
    # deck or Market is a real choice: the acquisitions were the agents' own
    assert [e.forced for e in t.of("acquire_deck")] == [False, False, False]
    assert not any(e.forced for e in t.events if e.kind in ("score", "damage", "resolve", "round_start"))


def test_r_9_1_and_r_11_game_over_with_placements():
    """R-9.1: the last living player wins; the log ends with the reason and every seat's
    place (R-11.2 placement order), consistent with the rewards."""
    t = one_round({0: "Tycoon", 1: "Stockpile"}, n=2, hp={1: 1})
    (over,) = t.of("game_over")
    assert (over.a, over.b) == (0, 1)
    assert [(e.seat, e.a, e.b) for e in t.of("place")] == [(0, 2, 1), (1, 4, 0)]
    assert t.events[-1].kind == "place" and t.done


def test_r_9_2_sudden_death_is_logged_and_the_game_goes_on():
    """R-9.2 (default no_survivor="sudden_death"): both last players would die at once; the
    damage is not dealt, the log says so (to every viewer alike), and the next round begins."""
    t = one_round({0: "Grave Digger", 1: "Grave Digger"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []})
    (spared,) = t.of("spared")
    assert (spared.seat, spared.a) == (-1, 2) and not t.of("damage") and not t.of("game_over")
    assert all(spared.text_for(v) == spared.public for v in (0, 1, 2, None)) and "Sudden death" in spared.public
    kinds = [e.kind for e in t.events]
    assert kinds.index("score") < kinds.index("spared") < kinds.index("first_player") < kinds.index("round_start", 1)
    assert not t.done and t.hp == [1, 1, 0]


def test_r_9_2_variant_share_win_co_winners_share_their_place():
    """R-9.2 variant no_survivor="share_win": both last players die at once and share the
    win (places 1 and 2: 1.5 each)."""
    t = one_round({0: "Grave Digger", 1: "Grave Digger"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []},
                  rules={"no_survivor": "share_win"})
    (over,) = t.of("game_over")
    assert (over.a, over.b) == (1, 2)
    places = {e.seat: (e.a, e.b) for e in t.of("place")}
    assert places == {0: (3, 1), 1: (3, 1), 2: (6, 0)}
    assert "1.5 (shared)" in t.of("place", 0)[0].text_for(None)


def test_r_9_4_epilogue_round_is_numbered_and_flagged():
    """R-9.4: after a 2-player game ends with one winner, the epilogue round starts (flagged)
    after the game-over events."""
    t = one_round({0: "Tycoon", 1: "Stockpile"}, n=2, hp={1: 1}, rules={"epilogue": True})
    kinds = [e.kind for e in t.events]
    assert kinds.index("game_over") < len(kinds) - 1 - kinds[::-1].index("round_start")
    start = [e for e in t.events if e.kind == "round_start"][-1]
    assert start.b == 1 and start.a == 2 and start.seat == 0


# ------------------------------------------------------------------ random play
def _random_actions(eng: Engine, rng: np.random.Generator) -> np.ndarray:
    m = eng.legal_mask()
    score = rng.random(m.shape) * m
    a = score.argmax(axis=1)
    a[~m.any(axis=1)] = -1
    return a


def _random_game_events(eng: Engine, seed: int, rng: np.random.Generator) -> list[Event]:
    """Every event of one game of random play from ``reset([seed])``."""
    eng.reset([seed])
    evs = list(eng.events(0))
    while not eng.terminated[0]:
        eng.step(_random_actions(eng, rng))
        evs += eng.events(0)
    return evs


def _check_hp(before_hp, before_alive, after_hp, after_alive, events):
    """Event-derived HP loss and deaths equal the state's changes."""
    hp = list(before_hp)
    died = set()
    for e in events:
        if e.kind in ("hit", "damage"):
            hp[e.seat] = max(0, hp[e.seat] - e.a)
            assert hp[e.seat] == e.b, (e, hp)
        elif e.kind == "death":
            died.add(e.seat)
    assert hp == list(after_hp)
    assert died == {q for q in range(len(hp)) if before_alive[q] and not after_alive[q]}


@pytest.mark.parametrize("players", [2, 6, 10])
def test_random_play_never_overflows_the_event_log(players):
    """A step logs at most MAX_EVENTS rows: under random play no row is ever lost."""
    B = 128
    eng = Engine(RulesConfig(num_players=players), batch_size=B)
    eng.reset(list(range(B)))
    rng = np.random.default_rng(players)
    finished = 0
    peak = int(eng.state["ev_n"].max())
    for step in range(600):
        eng.step(_random_actions(eng, rng))
        assert int(eng.state["ev_lost"].max()) == 0
        peak = max(peak, int(eng.state["ev_n"].max()))
        done = np.flatnonzero(eng.state["done"])
        if len(done):
            finished += len(done)
            eng.reset([10_000 * (step + 1) + int(g) for g in done], games=done)
            assert int(eng.state["ev_lost"][done].max()) == 0
    assert finished >= B  # whole games were played, resolutions and game ends included
    assert 0 < peak < MAX_EVENTS


@pytest.mark.parametrize("players", [3, 7])
def test_event_derived_damage_equals_the_hp_change(players):
    """Under random play, HP after every step equals HP before minus the logged direct and
    round damage (floored at 0, R-6.3), and the logged deaths are exactly the new Ghosts."""
    rng = np.random.default_rng(7)
    for seed in range(6):
        eng = Engine(RulesConfig(num_players=players), batch_size=1)
        eng.reset([seed])
        log = GameLog(eng)
        log.feed(eng.events(0))
        steps = 0
        while not eng.terminated[0]:
            r = eng.state[0]
            hp0, alive0 = r["hp"][:players].copy(), r["alive"][:players].copy()
            eng.step(_random_actions(eng, rng))
            evs = eng.events(0)
            _check_hp(hp0, alive0, r["hp"][:players], r["alive"][:players], evs)
            for summary in log.feed(evs):
                # R-9.2 sudden death, R-8.2 the grace round
                spared = any(e.kind in ("spared", "grace") for e in summary.events)
                if any(x["competed"] for x in summary.seats) and not spared:  # R-8.2: someone takes damage
                    assert sum(x["damage"] for x in summary.seats) >= 1
            steps += 1
        assert log.hp == [int(h) for h in eng.state[0]["hp"][:players]]
        assert log.alive == [bool(x) for x in eng.state[0]["alive"][:players]]


def test_round_summaries_agree_with_the_state_after_each_resolution():
    """The latest GameLog round equals the engine's own record of the last resolution."""
    rng = np.random.default_rng(3)
    seen = 0
    for seed in range(8):
        eng = Engine(RulesConfig(num_players=5), batch_size=1)
        eng.reset([seed])
        log = GameLog(eng)
        log.feed(eng.events(0))
        while not eng.terminated[0]:
            eng.step(_random_actions(eng, rng))
            rounds = log.feed(eng.events(0))
            if not rounds:
                continue
            last, r = rounds[-1], eng.state[0]
            assert [x["competed"] for x in last.seats] == [bool(x) for x in r["last_competed"][:5]]
            assert [x["score"] for x in last.seats if x["competed"]] == [
                int(r["last_score"][q]) for q in range(5) if r["last_competed"][q]]
            assert [x["damage"] for x in last.seats] == [int(x) for x in r["last_damage"][:5]]
            assert last.rule == int(r["last_rule"])
            seen += 1
    assert seen > 20


def test_events_never_name_hidden_cards_to_other_viewers():
    """R-12.3: for every event of random games, a viewer other than the event's seat sees
    no card name in a hidden event (deck acquisitions, draws, face-down plays, Shadow
    draws), and only those kinds are ever hidden."""
    rng = np.random.default_rng(11)
    eng = Engine(RulesConfig(num_players=6), batch_size=1)
    living = [c.name for c in eng.cards.living]
    shadow = [c.name for c in eng.cards.shadow]
    hidden_seen = set()
    for seed in range(10):
        for e in _random_game_events(eng, seed, rng):
            if not e.hidden:
                assert e.public == e.private
                continue
            hidden_seen.add(e.kind)
            assert e.kind in HIDDEN_KINDS
            # a face-down replacement (R-7.12) names the public card it replaced, not the new one
            public_names = {eng.cards.living[e.b].name} if e.kind == "replace" else set()
            for viewer in [None] + [q for q in range(6) if q != e.seat]:
                text = e.text_for(viewer)
                assert not any(name in text for name in set(living + shadow) - public_names), (e, viewer, text)
                assert e.to_dict(viewer)["a"] is None
            assert e.to_dict(e.seat)["a"] == e.a
    assert HIDDEN_KINDS - {"replace"} <= hidden_seen <= HIDDEN_KINDS


def test_recorder_rounds_come_from_the_event_log():
    """Record round lines carry every seat's card, score, damage and HP and the round's
    log; several rounds resolved in one step are each summarised."""
    rec = Recorder.new(RulesConfig(num_players=4), seed=21)
    rng = random.Random(0)
    while not rec.done:
        rec.step(rng.choice(rec.engine.legal_actions(0)))
    rounds = [x for x in rec.lines if "round" in x]
    assert [x["round"] for x in rounds] == list(range(1, len(rounds) + 1))
    assert all("unobserved" not in x for x in rounds)
    hp = [rec.engine.rules.hp] * 4
    for x in rounds:
        assert len(x["cards"]) == 4 and x["log"]
        for q in range(4):
            if x["scores"][q] is not None:
                assert x["cards"][q] is not None
        assert all(h <= h0 for h, h0 in zip(x["hp"], hp))
        hp = x["hp"]
    assert rounds[-1]["hp"] == [int(h) for h in rec.engine.state[0]["hp"][:4]]


# ------------------------------------------------------------------ forced decisions stay private
# R-12.1 / R-12.3: the engine takes a decision only when its one legal option follows from
# public facts (a hand of two or more cards all of one design is asked, tests/
# test_forced_decisions.py); the "only choice" marker is the seat's own all the same. Each
# case below builds the same decision twice, once forced (one legal option: a play or a
# replacement from a hand of one card) and once chosen (the same option picked among
# several), and checks that every other viewer reads the event identically, while the seat
# itself (and the god view) is told which one it was.
_REST = {"deck_top": ["Last Stand", "Closer", "Last Stand", "Last Stand", "Even Keel"]}
_FORCED_PAIRS = {
    # kind: (seat, forced table, chosen table); a table is (one_round kwargs)
    "play": (1, dict(plays={0: "Proud Heir", 1: "Closer", 2: "Proud Heir", 3: "Proud Heir"},
                     hands={1: []}, **_REST),
             dict(plays={0: "Proud Heir", 1: "Closer", 2: "Proud Heir", 3: "Proud Heir"},
                  hands={1: ["Grave Digger"]}, **_REST)),
    "acquire_deck": (1, dict(plays={0: "Proud Heir", 1: "Closer", 2: "Proud Heir", 3: "Proud Heir"},
                             hands={1: []}, **_REST),
                     dict(plays={0: "Proud Heir", 1: "Closer", 2: "Proud Heir", 3: "Proud Heir"},
                          hands={1: ["Grave Digger"]}, **_REST)),
    "acquire_market": (1, dict(n=2, first=1, plays={0: "Proud Heir", 1: "Closer"}, hands={0: ["Proud Heir"], 1: []},
                               market=["Closer", None, None], rest=0),
                       dict(n=2, first=1, plays={0: "Proud Heir", 1: {"card": "Closer", "market": 0}},
                            hands={0: ["Proud Heir"], 1: []}, market=["Closer", "Last Stand", None], rest=0)),
    "target": (1, dict(plays={0: "Proud Heir", 1: {"card": "Spite", "target": 0}}, ghosts={2: [], 3: []}, **_REST),
               dict(plays={0: "Proud Heir", 1: {"card": "Spite", "target": 0}, 2: "Proud Heir", 3: "Proud Heir"},
                    **_REST)),
    "attack": (1, dict(plays={0: "Proud Heir", 1: {"card": "Backstab", "target": 0}, 2: "Proud Heir",
                              3: "Proud Heir"}, hp={0: 2, 1: 1, 2: 1, 3: 1}, **_REST),
               dict(plays={0: "Proud Heir", 1: {"card": "Backstab", "target": 0}, 2: "Proud Heir",
                           3: "Proud Heir"}, hp={0: 2, 1: 1, 2: 2, 3: 1}, **_REST)),
    "market_discard": (1, dict(plays={0: "Proud Heir", 1: {"card": "Market Crash", "slot": 0}, 2: "Proud Heir",
                                      3: "Proud Heir"}, market=["Relief"], rules={"market_size": 1}, **_REST),
                       dict(plays={0: "Proud Heir", 1: {"card": "Market Crash", "slot": 0}, 2: "Proud Heir",
                                   3: "Proud Heir"}, market=["Relief", "Relief", "Mimic"], **_REST)),
    "market_take": (1, dict(plays={0: "Proud Heir", 1: {"card": "Black Market Deal", "slot": 0}, 2: "Proud Heir",
                                   3: "Proud Heir"}, market=["Relief"], rules={"market_size": 1}, **_REST),
                    dict(plays={0: "Proud Heir", 1: {"card": "Black Market Deal", "slot": 0}, 2: "Proud Heir",
                                3: "Proud Heir"}, market=["Relief", "Relief", "Mimic"], **_REST)),
    "replace": (1, dict(plays={0: "Proud Heir", 1: {"card": "Double Back", "market": 0, "replace": "Closer"},
                               2: "Proud Heir", 3: "Proud Heir"}, market=["Closer", "Relief", "Relief"],
                        hands={1: ["Double Back"]}, **_REST),
                dict(plays={0: "Proud Heir", 1: {"card": "Double Back", "market": 0, "replace": "Closer"},
                            2: "Proud Heir", 3: "Proud Heir"}, market=["Closer", "Relief", "Relief"],
                     hands={1: ["Double Back", "Grave Digger"]}, **_REST)),
    "pass": (1, dict(first=2, plays={0: "Proud Heir", 2: "Proud Heir"}, ghosts={1: ["Possession"], 3: []}, **_REST),
             dict(first=0, plays={0: "Proud Heir", 2: "Proud Heir"}, ghosts={1: ["Possession"], 3: []}, **_REST)),
    "haunt": (1, dict(plays={0: "Proud Heir", 2: "Proud Heir"}, haunts={1: ("Possession", 2)},
                      ghosts={1: ["Possession"], 3: []}, **_REST),
              dict(plays={0: "Proud Heir", 2: "Proud Heir", 3: "Proud Heir"}, haunts={1: ("Possession", 2)},
                   ghosts={1: ["Possession"]}, **_REST)),
}


def _the_decision(kwargs: dict, kind: str, seat: int) -> tuple[Event, LogTable]:
    kw = dict(kwargs)
    t = one_round(kw.pop("plays"), **kw)
    (e,) = t.of(kind, seat)
    return e, t


@pytest.mark.parametrize("kind", sorted(_FORCED_PAIRS))
def test_r_12_3_a_forced_decision_reads_like_a_chosen_one_to_every_other_viewer(kind):
    """R-12.1/R-12.3, for every decision kind: forced and chosen read the same to the other
    seats and to a spectator (text and to_dict); the deciding seat and god are told."""
    seat, forced_kw, chosen_kw = _FORCED_PAIRS[kind]
    forced, tf = _the_decision(forced_kw, kind, seat)
    chosen, tc = _the_decision(chosen_kw, kind, seat)
    assert forced.forced and not chosen.forced, "the pair must really be forced vs chosen"
    for viewer in [None] + [q for q in range(tf.P) if q != seat]:
        assert forced.to_dict(viewer) == chosen.to_dict(viewer), (kind, viewer)
        assert forced.text_for(viewer) == chosen.text_for(viewer) == forced.public
        assert not forced.forced_for(viewer)
    for own in (seat, "god"):
        assert forced.forced_for(own) and forced.to_dict(own)["forced"]
        assert forced.text_for(own) == forced.private + " (only choice)"
        assert not chosen.forced_for(own) and chosen.text_for(own) == chosen.private
    # nothing else in either round tells another seat that a decision was forced
    for t in (tf, tc):
        for e in t.events:
            for viewer in [None] + [q for q in range(t.P) if q != e.seat]:
                assert not e.to_dict(viewer)["forced"] and "(only choice)" not in e.text_for(viewer)


def test_r_12_3_no_viewer_learns_of_another_seats_forced_decisions_in_random_games():
    """R-12.3 over random games: for every event and every viewer other than its seat, the
    event as that viewer sees it is exactly the event as it would read had it been chosen."""
    import dataclasses

    rng = np.random.default_rng(5)
    counts = {"forced": 0, "chosen": 0}
    for players in (2, 5, 8):
        eng = Engine(RulesConfig(num_players=players), batch_size=1)
        for seed in range(40):  # forced decisions are rarer with the first seats' extra card (R-1.3)
            for e in _random_game_events(eng, seed, rng):
                if e.kind not in ACTION_KINDS:
                    continue
                counts["forced" if e.forced else "chosen"] += 1
                plain = dataclasses.replace(e, forced=False)
                for viewer in [None] + [q for q in range(players) if q != e.seat]:
                    assert e.to_dict(viewer) == plain.to_dict(viewer) and e.text_for(viewer) == plain.text_for(viewer)
                assert e.to_dict(e.seat)["forced"] == e.forced
    assert counts["forced"] > 20 and counts["chosen"] > 20
