"""Balance analysis: the recorded plays, the figures' consistency, the report files and CLI errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from eval.balance import diff_results, load_result, run_balance, validate_balance
from ripmarket_env.games.ripmarket.balance import MIN_SAMPLE, PlayRecorder, analyze, top_cards, two_proportion_p
from ripmarket_env.games.ripmarket.cards.loader import default_cards
from ripmarket_env.app.cli import app
from ripmarket_env.engine import Engine, RulesConfig
from ripmarket_env.games.ripmarket.state import PH_ACQUIRE


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("balance")
    res = run_balance(["greedy", "survivor", "random"], [3, 4], games=24, seed=3, workers=1, out=out, progress=False)
    return res, out


def _drive(eng, rec, rng):
    """Random legal play of every game, through the observer as the tournament calls it;
    yields (actor, state before, state after) per step."""
    B = eng.batch_size
    while not eng.terminated.all():
        actor = eng.current_player()
        mask = eng.legal_mask()
        acts = np.array([rng.choice(np.flatnonzero(mask[g])) if actor[g] >= 0 else -1 for g in range(B)])
        before = eng.state.copy()
        rec.before_step(eng, actor, acts)
        eng.step(acts)
        rec.after_step(eng, actor)
        yield actor, before, eng.state.copy()


def test_recorder_sees_every_shadow_play_forced_ones_included():
    """A Shadow card leaves a Ghost's hand only when it haunts (engine kernels): every such
    card, whichever seat's it was (also the decisions the engine takes alone inside
    advance()), is recorded in that step, with its victim."""
    rng = np.random.default_rng(0)
    # Ghosts in seat order (R-3.3's variant): a late Ghost often has a single victim left,
    # so the engine takes some haunts alone (with the Ghosts first every living player is one)
    eng = Engine(RulesConfig(num_players=5, ghost_phase="in_turn"), batch_size=16)
    eng.reset(list(range(21, 37)))
    rec = PlayRecorder(eng)
    checked = forced = 0
    for actor, before, after in _drive(eng, rec, rng):
        for g in range(eng.batch_size):
            if actor[g] < 0:
                continue
            forced += sum(e.kind == "haunt" and e.forced for e in eng.events(g))
            gone = before["shadow_hand"][g, :5] - after["shadow_hand"][g, :5]
            for q in range(5):
                for s_ in np.flatnonzero(gone[q] > 0):
                    assert rec.shadow[g][q][-int(gone[q].sum()):].count(int(s_)) == int(gone[q, s_])
                    checked += int(gone[q, s_])
    total = sum(len(x) for g in range(16) for x in rec.shadow[g])
    assert checked == total > 20
    assert sum(len(x) for g in range(16) for x in rec.haunted[g]) == total
    assert forced > 0, "these games should include haunts the engine took alone"


def test_recorder_rounds_and_market_offers():
    rng = np.random.default_rng(1)
    eng = Engine(RulesConfig(num_players=3), batch_size=4)
    eng.reset([5, 6, 7, 8])
    rec = PlayRecorder(eng)
    lost = np.zeros((4, 3), dtype=np.int64)
    hp0 = eng.state["hp"][:, :3].astype(np.int64).copy()
    for actor, before, after in _drive(eng, rec, rng):
        for g in np.flatnonzero(actor >= 0):
            if before["phase"][g] == PH_ACQUIRE:
                q = actor[g]
                offer = rec.offers[g][-1]
                assert offer[0] == q
                assert sorted(offer[1]) == sorted(int(d) for d in before["market"][g] if d >= 0)
    for g in range(4):
        r = rec.game_record(eng, g)
        rounds = [x[4] for x in r["round_seats"]]
        assert rounds == sorted(rounds) and rounds[0] == 1  # each seat's row names its round
        for q, card, by, hp_lost, _round in r["round_seats"]:
            lost[g, q] += hp_lost
        # every HP lost (round damage, Backstab, ...) is in some round's figures
        assert list(lost[g]) == list(hp0[g] - eng.state["hp"][g, :3])
        assert all(took == -1 or took in seen for _, seen, took in r["offers"])


def test_counts_are_consistent(small):
    res, _ = small
    assert [f["players"] for f in res["by_players"]] == [3, 4]
    for f in res["by_players"]:
        P, G = f["players"], f["games"]
        assert G >= 24 and G % P == 0
        assert sum(c["plays"] for c in f["living"]) == f["living_plays"] > 0
        assert sum(c["plays"] for c in f["shadow"]) == f["shadow_plays"]
        assert sum(c["play_share"] for c in f["living"]) == pytest.approx(1.0)
        # every Shadow card played haunts exactly one player
        assert sum(c["haunted_player_games"] for c in f["shadow"]) <= f["shadow_plays"]
        # wins by first-round position and by seat count a shared win as 1/k: one win per game with a winner
        assert sum(w["wins"] for w in f["position_win"]) == pytest.approx(f["games_with_winner"])
        assert sum(w["wins"] for w in f["seat_win"]) == pytest.approx(f["games_with_winner"])
        assert f["games_with_winner"] <= G and f["wins"] >= f["games_with_winner"]
        assert f["games_single_winner"] + f["games_shared_win"] + f["games_no_winner"] == G
        assert f["share_no_single_winner"] == pytest.approx(1 - f["games_single_winner"] / G)
        assert sum(a["player_games"] for a in f["by_agent"].values()) == G * P
        assert set(f["by_agent"]) == {"greedy", "survivor", "random"}
        assert sum(a["living_plays"] for a in f["by_agent"].values()) == f["living_plays"]
        assert sum(c["market"]["taken"] for c in f["living"]) > 0
        assert f["player_rounds"] >= f["player_rounds_hurt"] > 0
        for c in f["living"]:
            assert c["win_played"]["n"] + c["win_not_played"]["n"] == G * P
            assert c["win_played"]["wins"] + c["win_not_played"]["wins"] == f["wins"]
            lo, hi = c["win_played"]["ci"]
            assert 0.0 <= lo <= hi <= 1.0
            assert c["market"]["taken"] <= c["market"]["offered"]
            assert c["damage"]["hurt_played"]["n"] == c["damage"]["rounds"]
        assert sum(f["rounds"]["histogram"].values()) == G
        assert f["rounds"]["min"] <= f["rounds"]["mean"] <= f["rounds"]["max"]
        assert 0 <= f["ghost_swings"]["games_with_swing"] <= G
        assert f["ghost_swings"]["swings"] <= f["ghost_swings"]["rounds"]


def test_analyze_counts_a_handmade_game():
    cards = default_cards()
    game = {
        "winners": [True, False, False],
        "rounds": 3,
        "first_player": 2,
        "shadow_swings": 1,
        "living_plays": [[0, 0, 1], [1], []],
        "shadow_plays": [[], [], [0]],
        "haunted": [[0], [], []],
        "offers": [[0, [0, 1, 2], 1], [1, [1, 2], -1], [2, [0], 0]],
        "round_seats": [[0, 0, [0], 1], [1, 1, [], 0], [0, 1, [], 0], [1, 1, [], 1], [2, 1, [0], 0]],
        "lineup": ["greedy", "random", "greedy"],
    }
    f = analyze([game], 3, cards)
    assert f["living"][0]["market"] == {"offered": 2, "taken": 1, "take_rate": f["living"][0]["market"]["take_rate"]}
    assert f["living"][0]["market"]["take_rate"]["rate"] == 0.5
    assert f["living"][1]["market"]["offered"] == 2 and f["living"][1]["market"]["taken"] == 1
    assert f["living"][2]["market"]["taken"] == 0
    dmg = f["living"][1]["damage"]  # card 1 on the table in 4 rounds, 1 of them with an HP loss
    assert (dmg["hurt_played"]["wins"], dmg["hurt_played"]["n"]) == (1, 4)
    assert (dmg["hurt_other"]["wins"], dmg["hurt_other"]["n"]) == (1, 1)
    sd = f["shadow"][0]["damage"]  # Shadow card 0 attached in 2 rounds, hurt in 1
    assert (sd["hurt_haunted"]["wins"], sd["hurt_haunted"]["n"]) == (1, 2)
    assert f["by_agent"]["greedy"]["player_games"] == 2 and f["by_agent"]["greedy"]["win_share"]["wins"] == 1
    assert f["games_single_winner"] == 1 and f["share_no_single_winner"] == 0
    assert f["living"][0]["plays"] == 2 and f["living"][1]["plays"] == 2
    assert f["living"][0]["win_played"]["wins"] == 1 and f["living"][0]["win_played"]["n"] == 1
    assert f["living"][1]["win_played"]["n"] == 2 and f["living"][1]["win_not_played"]["n"] == 1
    assert f["shadow"][0]["win_haunted"]["wins"] == 1
    assert [w["wins"] for w in f["position_win"]] == [0, 1, 0]  # seat 0 is one seat after the First Player
    assert f["ghost_swings"]["per_round"] == pytest.approx(1 / 3)


def test_round_matched_difference_removes_the_survival_association():
    """A card that does nothing: every seat plays design (seat + round + game) % 2, seat 0
    wins, seat s lives 4 - s rounds. The plain difference of design 0 is large (the players
    who live longer play both designs; the one who dies first only one), the round-matched
    difference of both designs is zero (within each round the designs win equally often)."""
    cards = default_cards()
    games = []
    for g in range(2):
        plays = [[(s + r + g) % 2 for r in range(1, 5 - s)] for s in range(4)]
        seats = [[s, plays[s][r - 1], [], 0, r] for r in range(1, 5) for s in range(4) if r <= 4 - s]
        games.append({"winners": [True, False, False, False], "rounds": 4, "first_player": 0,
                      "shadow_swings": 0, "living_plays": plays, "shadow_plays": [[]] * 4,
                      "haunted": [[]] * 4, "offers": [], "round_seats": seats, "lineup": ["greedy"] * 4})
    f = analyze(games, 4, cards)
    assert f["living"][0]["win_delta"] > 0.2  # 2 wins of 7 player-games against 0 of 1
    for d in (0, 1):
        rm = f["living"][d]["win_delta_round_matched"]
        assert rm["delta"] == pytest.approx(0.0) and rm["plays"] == 10
        assert rm["ci"][0] < 0 < rm["ci"][1]
    assert f["living"][2]["win_delta_round_matched"] is None  # never on the table


def test_report_files(small):
    res, out = small
    for name in ("balance.md", "balance.json", "game_length.png", "seat_position.png", "cards_3p.png", "cards_4p.png"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "balance.json").read_text())
    assert data["by_players"][1]["living_plays"] == res["by_players"][1]["living_plays"]
    md = (out / "balance.md").read_text()
    assert "## 4 players" in md and default_cards().living[0].name in md
    assert "| round-matched difference |" in md  # the column, and a value for every design on the table
    on_table = [c for c in res["by_players"][1]["living"] if c["damage"]["rounds"]]
    assert on_table and all(c["win_delta_round_matched"] is not None for c in on_table)
    assert all(c["win_delta_round_matched"] is None for c in res["by_players"][1]["living"] if not c["damage"]["rounds"])


def test_reproducible_from_the_seed(small):
    res, _ = small
    again = run_balance(["greedy", "survivor", "random"], [3], games=24, seed=3, workers=1, progress=False)
    a, b = again["by_players"][0], res["by_players"][0]
    assert [c["plays"] for c in a["living"]] == [c["plays"] for c in b["living"]]
    assert a["rounds"] == b["rounds"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="from 2 to 10"):
        validate_balance(["greedy"], [4, 11], 10)
    with pytest.raises(ValueError, match="twice"):
        validate_balance(["greedy"], [4, 4], 10)
    with pytest.raises(ValueError, match="unknown agent"):
        validate_balance(["nobody"], [4], 10)
    with pytest.raises(ValueError, match="positive"):
        validate_balance(["greedy"], [4], 0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "4,11"], "integers from 2 to 10"),
        (["--players", "six"], "integers from 2 to 10"),
        (["--players", "4,4"], "twice"),
        (["--games", "0"], "integers from 1 to 10000000"),
        (["--games", "99999999999999999999"], "integers from 1 to 10000000"),  # not days of play filling memory
        (["--agents", "greedy,nobody"], "unknown agent 'nobody'"),
        (["--seed", "-1"], "non-negative"),
        (["--workers", "0"], "integers from 1 to 256"),
    ],
)
def test_cli_errors(args, message):
    r = CliRunner().invoke(app, ["balance", *args])
    assert r.exit_code == 2
    assert message in r.output


def test_cli_writes_the_report(tmp_path):
    out = tmp_path / "b"
    r = CliRunner().invoke(
        app, ["balance", "--players", "3", "--games", "6", "--agents", "greedy,random", "--workers", "1", "--quiet", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "Balance overview" in r.output and str(out / "balance.md") in r.output
    assert (out / "balance.md").exists()


def test_shared_wins_count_fractionally():
    cards = default_cards()
    base = {"rounds": 2, "shadow_swings": 0, "living_plays": [[], [], [], []], "shadow_plays": [[], [], [], []],
            "haunted": [[], [], [], []]}
    games = [dict(base, winners=[True, True, False, False], first_player=0),
             dict(base, winners=[False, False, False, False], first_player=0),
             dict(base, winners=[False, False, True, False], first_player=1)]
    f = analyze(games, 4, cards)
    assert [w["wins"] for w in f["seat_win"]] == [0.5, 0.5, 1, 0]
    assert [w["wins"] for w in f["position_win"]] == [0.5, 1.5, 0, 0]
    assert sum(w["wins"] for w in f["seat_win"]) == 2 == f["games_with_winner"]
    assert (f["games_shared_win"], f["games_no_winner"]) == (1, 1)
    assert f["share_no_single_winner"] == pytest.approx(2 / 3)


def test_two_proportion_p():
    assert two_proportion_p(30, 100, 50, 100) == pytest.approx(0.00389, abs=1e-4)
    assert two_proportion_p(5, 10, 5, 10) == pytest.approx(1.0)
    assert two_proportion_p(1, 0, 1, 10) is None


def test_top_cards_rank_by_significance_with_a_minimum_sample():
    def card(name, k1, n1, k2, n2):
        p = two_proportion_p(k1, n1, k2, n2)
        return {"name": name, "win_played": {"n": n1}, "win_not_played": {"n": n2},
                "win_delta": k1 / n1 - k2 / n2, "win_p": p}

    f = {"living": [card("tiny but huge", 2, 2, 10, 100), card("big, clear", 60, 100, 30, 100),
                    card("big, small effect", 35, 100, 30, 100), card("medium", 25, 50, 30, 100)]}
    names = [c["name"] for c in top_cards(f)]
    assert "tiny but huge" not in names  # 2 player-games: below MIN_SAMPLE
    assert names[0] == "big, clear" and names.index("medium") < names.index("big, small effect")
    assert MIN_SAMPLE > 2


def test_diff_flags_significant_changes(small, tmp_path):
    res, out = small
    a = load_result(out)
    same = diff_results(a, a)
    assert not any(c["significant"] for row in same["by_players"] for c in row["living"] + row["shadow"])
    b = json.loads(json.dumps(a))
    c = max(b["by_players"][1]["living"], key=lambda c: c["win_played"]["n"])
    n = c["win_played"]["n"]
    c["win_played"] = {"wins": n, "n": n, "rate": 1.0, "ci": [0.9, 1.0]}
    d = diff_results(a, b)
    flagged = [x["name"] for x in d["by_players"][1]["living"] if x["significant"]]
    assert flagged == [c["name"]]
    (tmp_path / "b.json").write_text(json.dumps(b))
    r = CliRunner().invoke(app, ["balance", "diff", str(out / "balance.json"), str(tmp_path / "b.json"),
                                 "--out", str(tmp_path / "diff.md")])
    assert r.exit_code == 0, r.output
    assert c["name"] in r.output and "significant changes" in r.output
    assert f"⚑ {c['name']}" in (tmp_path / "diff.md").read_text()
    assert "differ in" not in r.output and "Settings that differ" not in (tmp_path / "diff.md").read_text()
    # runs made under other settings (rules, seed) say so, in the terminal and the report
    b["settings"].update(rules={"hand_size": 3}, seed=4)
    (tmp_path / "b.json").write_text(json.dumps(b))
    r = CliRunner().invoke(app, ["balance", "diff", str(out / "balance.json"), str(tmp_path / "b.json"),
                                 "--out", str(tmp_path / "diff.md")])
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "The runs differ in: rules (A: defaults, B: hand_size=3); seed (A: 3, B: 4)" in text
    assert "- rules (A: defaults, B: hand_size=3)" in (tmp_path / "diff.md").read_text()


@pytest.mark.parametrize("content, message", [(None, "no such file"), ("{", "malformed JSON"),
                                               ('{"x": 1}', "not a balance report")])
def test_diff_rejects_bad_files(tmp_path, small, content, message):
    _, out = small
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    r = CliRunner().invoke(app, ["balance", "diff", str(out), str(bad)])
    assert r.exit_code == 2 and message in r.output, r.output


def test_a_designers_card_file(tmp_path):
    src = json.loads((Path(__file__).resolve().parents[1] / "ripmarket_env/games/ripmarket/cards/cards.json").read_text())
    src["living"][0]["value"] = 2 if src["living"][0]["value"] > 2 else 8  # another printed value
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(src))
    res = run_balance(["greedy", "random"], [3], games=6, seed=2, workers=1, progress=False, cards=mine)
    assert res["settings"]["cards"] == str(mine.resolve())
    assert res["settings"]["cards_digest"] != default_cards().digest
    # the heuristics and search are told the designer's cards; agents that cannot take them still play
    from eval.tournament import _make_agent
    from ripmarket_env.games.ripmarket.cards.loader import load_cards
    from ripmarket_env.app.session import TableSession

    db = load_cards(mine)
    assert _make_agent("greedy", 1, None, db).db is db and _make_agent("search", 1, {"budget": 8}, db).cards is db
    assert _make_agent("random", 1, None, db) is not None
    s = TableSession("ripmarket", 3, 0, ["greedy", "random"], seed=1, rules={"start_hp": 4}, engine_kwargs={"cards": db})
    assert s.bots[1].db is db and s.bots[1].start_hp == 4 and s.engine.cards is db
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "living": []}')
    for cmd in (["balance", "--players", "3", "--games", "3"], ["tournament", "--agents", "greedy,random"],
                ["play"]):
        r = CliRunner().invoke(app, [*cmd, "--cards", str(bad)])
        assert r.exit_code == 2 and "--cards:" in r.output and str(bad) in r.output, r.output


def test_r_9_2_zoo_games_end_with_exactly_one_winner():
    """R-9.2 (sudden death): zoo games at every player count 2-10 end with exactly one
    winner: at least 98% of them (one duplicate set per count here; the figures at scale
    are in docs/RULES.md, "No Ghost wins, measured"). With the first edition's shared
    Ghost wins (variant no_survivor="share_win") about one zoo game in ten had none."""
    from eval.balance import default_agents

    counts = list(range(2, 11))
    res = run_balance(default_agents("ripmarket"), counts, games=1, seed=7, workers=1, progress=False)
    per = {f["players"]: f for f in res["by_players"]}
    assert sorted(per) == counts
    games = sum(f["games"] for f in per.values())
    single = sum(f["games_single_winner"] for f in per.values())
    assert games == sum(counts)
    assert all(f["games_no_winner"] == 0 for f in per.values())
    assert single / games >= 0.98, {p: (f["games_single_winner"], f["games"]) for p, f in per.items()}


def test_balance_cli_plays_a_rules_variant_and_refuses_bad_ones(tmp_path):
    """`ripmarket balance --rule FIELD=VALUE` plays that rules variant (recorded in the
    report's settings); an unknown field or a value the config refuses fails in one line
    before any game is played."""
    runner = CliRunner()
    out = tmp_path / "b"
    r = runner.invoke(app, ["balance", "--players", "4", "--games", "8", "--workers", "1", "--quiet",
                            "--rule", "ghost_phase=in_turn", "--rule", "grace_round=false", "--out", str(out)])
    assert r.exit_code == 0, r.output
    settings = json.loads((out / "balance.json").read_text())["settings"]
    assert settings["rules"] == {"ghost_phase": "in_turn", "grace_round": False}
    assert "rules (instead of the defaults): ghost_phase=in_turn, grace_round=False" in (out / "balance.md").read_text()
    for args, message in ((["--rule", "bogus=1"], "'bogus' is not a rules field"),
                          (["--rule", "token_tie=first"], "token_tie='first' is not allowed; allowed: earliest | latest"),
                          (["--rule", "ghost_phase"], "expected FIELD=VALUE"),
                          # Python's int() refuses 4,300 digits and more: said as a bad value
                          (["--rule", "max_rounds=" + "9" * 5000], "an integer of 5,000 digits")):
        bad = tmp_path / "bad"
        r = runner.invoke(app, ["balance", "--players", "4", "--games", "8", "--out", str(bad), *args])
        assert r.exit_code == 2 and message in r.output, r.output
        assert not bad.exists()


def test_a_run_names_its_cards_so_that_it_reads_in_another_checkout(tmp_path):
    """A run of a packaged edition records the edition's name, not this checkout's path; a
    run whose card file is gone (made in another checkout) is read with the packaged cards
    of its digest, and one whose cards are nowhere is refused naming the file."""
    from ripmarket_env.games.ripmarket.balance import result_cards
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    res = run_balance(["greedy", "random"], [3], games=6, seed=2, workers=1, progress=False, cards="first-edition")
    first = load_cards("first-edition")
    assert res["settings"]["cards"] == "first-edition"
    assert result_cards(res).digest == first.digest
    moved = {"settings": {"cards": str(tmp_path / "gone" / "first_edition.json"), "cards_digest": first.digest}}
    assert result_cards(moved).digest == first.digest
    lost = {"settings": {"cards": str(tmp_path / "gone.json"), "cards_digest": "0" * 64}}
    with pytest.raises(ValueError, match="gone.json"):
        result_cards(lost)


def test_a_run_keeps_its_card_file_and_a_rerun_leaves_no_file_of_the_last_one(tmp_path):
    """A run of a designer's card file keeps a copy of it (cards-played.json), so that
    `balance targets` still reads the run after the file is edited on; a run into the
    folder of an earlier one removes what only the earlier one wrote (its other player
    counts' plots), and keeps files it did not write."""
    from eval.balance import CARDS_PLAYED, load_result
    from ripmarket_env.games.ripmarket.balance import result_cards, targets
    from ripmarket_env.games.ripmarket.cards.loader import CardDataError, load_cards

    src = json.loads((Path(__file__).resolve().parents[1] / "ripmarket_env/games/ripmarket/cards/cards.json").read_text())
    src["living"][0]["value"] = 2 if src["living"][0]["value"] > 2 else 8  # a designer's own cards
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(src))
    out = tmp_path / "run"
    run_balance(["greedy", "random"], [3], games=6, seed=2, workers=1, progress=False, cards=str(mine), out=out)
    played = load_cards(str(mine)).digest
    assert (out / CARDS_PLAYED).read_bytes() == mine.read_bytes()
    assert "cards_3p.png" in json.loads((out / "balance.json").read_text())["files"]
    data = json.loads(mine.read_text())
    data["living"][0]["copies"] += 1  # edited on: another deck (and one that no longer loads)
    mine.write_text(json.dumps(data))
    with pytest.raises(CardDataError):
        load_cards(str(mine))
    result = load_result(out)
    assert result_cards(result).digest == played and "3 players" in targets(result)
    (out / "notes.txt").write_text("mine")
    run_balance(["greedy", "random"], [4], games=8, seed=2, workers=1, progress=False, out=out)
    left = {p.name for p in out.iterdir()}
    assert "cards_4p.png" in left and "cards_3p.png" not in left and CARDS_PLAYED not in left
    assert "notes.txt" in left and json.loads((out / "balance.json").read_text())["files"] == sorted(left - {"notes.txt"})
