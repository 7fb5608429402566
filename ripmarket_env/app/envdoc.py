"""``docs/ENV.md``, the environment reference, generated from the code.

:func:`render_env_markdown` builds the page from the action table
(``games/ripmarket/actions.py``), the observation layout (``games/ripmarket/observation.py``), the decision
phases (``games/ripmarket/state.py``) and the card database, so the page cannot drift from the
engine: a test compares the committed file with the generated text
(``ripmarket envdoc --write docs/ENV.md`` regenerates it).
"""

from __future__ import annotations

import re

from ripmarket_env.games.ripmarket.cards.loader import CardDB, default_cards
from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.observation import SEAT, layout
from ripmarket_env.games.ripmarket.state import MAX_SEATS, PHASE_NAMES

REGEN_COMMAND = "ripmarket envdoc --write docs/ENV.md"

RULES = "RULES.md"

# What each decision phase asks, who answers and which action kinds are legal.
PHASES = {
    "acquire": (
        "a living player starts their turn: take the top card of the Living Deck or a Market card",
        "`acquire_deck`, `acquire_market` (Market only with a non-empty hand, or when deck and discard are empty)",
        "R-4.1, R-4.2",
    ),
    "play": (
        "the same player plays one Living card from hand",
        "`card` (every design in hand)",
        "R-4.4",
    ),
    "choose_target": (
        "the card just played names a player (its target, a Deflection, a direct-damage victim)",
        "`target` (living players; for direct damage only those with more HP)",
        "R-2.7, R-4.5",
    ),
    "choose_market_slot": (
        "the card just played names a Market slot (take or discard its card)",
        "`market_slot` (non-empty slots)",
        "R-2.14, R-2.16",
    ),
    "choose_replacement": (
        "the card just played is replaced by another card from hand",
        "`card` (every design in hand)",
        "R-7.9",
    ),
    "ghost": (
        "a Ghost's turn: pass, or attach a Shadow card to a living player",
        "`pass`, `shadow` (only while a living player has not taken their turn this round)",
        "R-5.1, R-5.2",
    ),
    "choose_victim": (
        "the Ghost names the player its Shadow card haunts",
        "`target` (living players who have not taken their turn this round)",
        "R-5.2",
    ),
    "game_over": (
        "the game has ended; no decision",
        "none (the mask is all False)",
        "R-9",
    ),
}

ENGINE_EXAMPLE = '''\
import numpy as np
from ripmarket_env.engine import Engine, RulesConfig

eng = Engine(RulesConfig(num_players=4), batch_size=2)
eng.reset([7, 8])                      # one seed per game
rng = np.random.default_rng(0)
while not eng.terminated.all():
    seats = eng.current_player()       # the deciding seat per game, -1 once it is over
    obs = eng.observe()                # (2, obs_size) float32, each game seen by its actor
    mask = eng.legal_mask()            # (2, num_actions) bool
    actions = np.array([rng.choice(np.flatnonzero(m)) if s >= 0 else -1
                        for s, m in zip(seats, mask)])
    rewards, terminated = eng.step(actions)
print(eng.rewards())                   # final rewards per seat (R-11)
twin = eng.clone([0])                  # an independent copy of game 0
'''


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _row(*cells) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    out = []
    for ch in heading.lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def _rule_link(rule_heading: str) -> str:
    return f"{RULES}#{_anchor(rule_heading)}"


def render_env_markdown(db: CardDB | None = None) -> str:
    db = db if db is not None else default_cards()
    table = ActionTable(db.n_living, db.n_shadow)
    lay = layout(db.n_living, db.n_shadow)
    n_seat_pieces = sum(1 for p in lay.pieces if p.scope == SEAT)
    lines: list[str] = []
    w = lines.append

    w("# R.I.P. Market environment reference")
    w("")
    w(f"<!-- Generated from the engine. Do not edit by hand: run `{REGEN_COMMAND}`. -->")
    w("")
    w("## Description")
    w("")
    w("R.I.P. Market is a card battle royale for 2–10 players in which the dead keep playing: "
      "every round each player acquires a card and plays one, the lowest final score takes "
      "damage, and a player at 0 HP becomes a Ghost who haunts the living with Shadow cards. "
      "The last player alive wins. The full rules are in [RULES.md](RULES.md), the cards in "
      "[CARDS.md](CARDS.md).")
    w("")
    w("The environment is a turn-based multi-agent game with hidden information: one seat "
      "decides at a time, sees only its own hand and the public table, and chooses from a "
      "flat discrete action space filtered by a legal-action mask. Decisions with a single "
      "legal option are taken by the engine (R-12.1), so every agent step is a real choice. "
      "The engine (`ripmarket_env.engine.Engine`) runs a batch of independent games at once; "
      "every array is batch-first.")
    w("")
    w("## Specs")
    w("")
    w("| | |")
    w("|---|---|")
    for k, v in (
        ("Players", "2–10 per game (`RulesConfig(num_players=...)`), one seat each"),
        ("Action space", f"`Discrete({table.size})`: one flat table for every decision (below)"),
        ("Action dtype", "integer (`int64`); `-1` skips a game in a batched `step`"),
        ("Legal-action mask", f"`bool`, shape `(batch, {table.size})`; all False once a game is over"),
        ("Observation", f"`float32`, shape `(batch, {lay.size})`: {lay.seat_start} global features "
                        f"+ {MAX_SEATS} seat blocks × {lay.seat_size} features"),
        ("Observation values", "one-hot flags and counts or sizes scaled to about [0, 1]; "
                               "final scores can be negative or above 1"),
        ("Rewards", "`float32`, shape `(batch, players)`: zero on every step but the last (R-11)"),
        ("Termination", "`bool`, shape `(batch,)`; no truncation (R-9.3)"),
        ("Card database", f"{db.n_living} Living designs ({db.living_deck_size} cards), "
                          f"{db.n_shadow} Shadow designs ({db.shadow_deck_size} cards)"),
    ):
        w(_row(k, v))
    w("")
    w("## Action table")
    w("")
    w("The argument is the Market slot, the card design id, or the seat offset: `target` k "
      "names the player k seats clockwise from the deciding seat. Which actions are legal "
      "depends on the decision phase (next sections).")
    w("")
    w("| index | kind | argument | meaning |")
    w("|---|---|---|---|")
    for a, kind, arg, meaning in table.rows(db):
        w(_row(a, f"`{kind}`", arg, meaning))
    w("")
    w("## Observation table")
    w("")
    w(f"The observation is seen from one seat, the *viewer* (R-12.3). The first "
      f"{lay.seat_start} features are global; then come {MAX_SEATS} seat blocks of "
      f"{lay.seat_size} features each. Seat block k (k = 0..{MAX_SEATS - 1}) describes the "
      f"player k seats clockwise from the viewer (block 0 is the viewer); the "
      f"{n_seat_pieces} seat pieces below are listed for block k, at the index shown plus "
      f"{lay.seat_size}·k. Blocks past the game's player count are all zero. "
      "`ripmarket_env.games.ripmarket.observation.named_view` splits a vector into these pieces.")
    w("")
    w("| index | feature | size | meaning |")
    w("|---|---|---|---|")
    sizes = {p.name: p.size for p in lay.pieces}
    for idx, name, doc in lay.table_rows():
        idx = re.sub(r"^(\d+)\.\.\1\b", r"\1", idx)  # "8..8" -> "8"
        base = name.split(".", 1)[1] if name.startswith("seat[k].") else name
        w(_row(idx, f"`{name}`", sizes[base], doc))
    w("")
    w("## Decision phases")
    w("")
    w("Every decision belongs to one phase (the `phase` piece of the observation, "
      "`Engine.phase()`). A living player's turn is `acquire` then `play`, then any choices "
      "the played card asks for; a Ghost's turn is `ghost`, then `choose_victim` if it "
      "plays a Shadow card.")
    w("")
    w("| # | phase | decision | legal actions | rules |")
    w("|---|---|---|---|---|")
    for i, name in enumerate(PHASE_NAMES):
        what, legal, rules = PHASES[name]
        w(_row(i, f"`{name}`", what, legal, rules))
    w("")
    w("## Rewards and Termination")
    w("")
    w(f"- **Termination** ([R-9]({_rule_link('R-9 Game end')})): the game ends the moment "
      "only one living player remains, who wins (R-9.1). Round damage that would leave no "
      "one alive is not dealt, and the game goes on (sudden death, R-9.2; variant "
      "`no_survivor=\"share_win\"`: the players who died last share the win). A `max_rounds` "
      "safety cap (default 3 × players × start HP) ends the game as a shared draw among the "
      "living (R-9.3); it is a rule of the game, so it ends the game as a termination, never "
      "a truncation.")
    w(f"- **Rewards** ([R-11]({_rule_link('R-11 Rewards (environment, not rulebook)')})): "
      "paid once, on the step that ends the game, to every seat, Ghosts included; every "
      "earlier step pays 0 (R-11.3). Default `reward_mode=\"win\"`: the winner gets +1 and "
      "every other seat −1/(n−1), n the starting player count; k co-winners each get "
      "(n−k)/(k(n−1)) (R-11.1). Variant `reward_mode=\"placement\"`: place i by elimination "
      "order is worth 1 − 2(i−1)/(n−1), ties averaged (R-11.2). Rewards always sum to zero.")
    w("- `Engine.step` returns the rewards paid by that step; `Engine.rewards()` holds the "
      "final rewards once a game is terminated.")
    w("")
    w("## Illegal actions")
    w("")
    w("The engine rejects an illegal action with `IllegalActionError` (a `ValueError`) naming "
      "the game, the action and the legal actions, and changes nothing (R-12.2). The envs add "
      "`illegal_action=\"raise\" | \"terminate\"` (with `illegal_reward`, default -1) for "
      "algorithms without action masking; any other value is refused at construction.")
    w("")
    w("| env | `\"raise\"` (default) | `\"terminate\"` |")
    w("|---|---|---|")
    for k, r, t in (
        ("AEC (`raw_env`)", "raises; the game is unchanged",
         "the game ends there: the offender gets `illegal_reward`, every other seat 0"),
        ("AEC (`env()`, PettingZoo wrappers)", "terminates (PettingZoo's `TerminateIllegalWrapper`)",
         "the same"),
        ("Gym (`RipMarket-v0`)", "raises; the game is unchanged",
         "the episode ends (`terminated=True`, reward `illegal_reward`, `info[\"illegal_action\"]` True), "
         "the game is not stepped"),
        ("Vector (`RipMarketVecEnv`, `make_vec`)", "raises; no game of the batch changes",
         "only the offending games end (reward `illegal_reward`, done, terminal observation = the "
         "observation the action answered) and are dealt again; the others step as usual. SB3: "
         "`infos[i][\"illegal_action\"]` True; Gymnasium: `info[\"illegal_action\"]` `(num_envs,)` bool"),
    ):
        w(_row(k, r, t))
    w("")
    w("Out-of-range integers count as illegal actions. In the vector envs a malformed batch "
      "(non-integer actions, the wrong shape) raises `ValueError` in both modes and changes nothing.")
    w("")
    w("## Parallel env")
    w("")
    w("`ripmarket_env.parallel_env(game, num_players=..., obs_format=\"dict\")` (or "
      "`ripmarket_env.make(game, parallel=True)`) is a PettingZoo `ParallelEnv` of any registered "
      "game (`ripmarket_env/envs/parallel.py`): every seat gets an observation and sends an action "
      "on every step, so parallel-API trainers (TorchRL's `PettingZooWrapper`, AgileRL's IPPO, "
      "RLlib's `ParallelPettingZooEnv`) take the turn-based game as it is; "
      "[SCALE_OUT.md](SCALE_OUT.md#the-parallel-env-in-parallel-api-trainers) has each trainer's lines.")
    w("")
    w(f"- **Wait.** The action space is `Discrete({table.size + 1})`: the game's actions and, last, "
      f"*wait* (`{table.size}`, `env.wait_action`). The seat deciding now has its legal actions (wait "
      "illegal); every other seat has exactly one legal action, wait, also once the game is over, so "
      "no mask is ever empty. Only the deciding seat's action is applied; the other seats' actions "
      "are ignored whatever they are, so an idle seat never changes the game. A missing or illegal "
      "action of the deciding seat raises and changes nothing (`illegal_action=\"terminate\"`: as in "
      "the AEC env).")
    w(f"- **Observations** (`obs_format`): `\"dict\"` the AEC env's `{{\"observation\", \"action_mask\"}}` "
      f"(mask of {table.size + 1}, TorchRL, PettingZoo's `parallel_api_test`); `\"rllib\"` the same "
      "under the keys of RLlib's action-masking RLModule, `{\"observations\", \"action_mask\"}`; "
      "`\"box\"` the float32 observation alone, the mask in the infos (AgileRL).")
    w("- **Infos** fixed numeric types only: `phase_id` (int), the game's seat flag (bool), "
      "`acting` (bool) and, with `\"box\"`, `action_mask` (a list of 0/1 ints: AgileRL reads masks "
      "there; TorchRL refuses a mask in both the observation and the infos).")
    w("- **Rewards and termination** as in the AEC env: 0 until the last step, which pays every seat "
      "and terminates every seat; `agents` is then empty.")
    w("")
    w("## Engine API")
    w("")
    w("`ripmarket_env.engine.Engine(rules=RulesConfig(...), batch_size=B)` holds B games "
      "with one rules config. Every game carries its own RNG: the same seed and actions "
      "replay the same game whatever the batch size or row (R-12.4).")
    w("")
    w("| method | returns |")
    w("|---|---|")
    for k, v in (
        ("`reset(seeds, games=None)`", "starts new games, one seed per game (all rows, or the rows in `games`)"),
        ("`current_player()`", "`(B,)` int64: the seat that decides next, -1 for finished games"),
        ("`legal_mask()`", f"`(B, {table.size})` bool: the legal actions of each game's decision"),
        ("`observe(viewers=None, out=None)`", f"`(B, {lay.size})` float32: each game seen by one seat "
                                              "(default: the deciding seat); any seat may view"),
        ("`step(actions)`", "`(rewards (B, players) float32, terminated (B,) bool)`; raises "
                            "`IllegalActionError` and changes nothing if an action is illegal (R-12.2)"),
        ("`clone(games=None)`", "a new `Engine` holding independent copies of the given games"),
        ("`rewards()`", "`(B, players)` float32: final rewards of terminated games"),
        ("`terminated`", "`(B,)` bool: which games are over"),
        ("`num_actions`, `obs_size`", f"{table.size}, {lay.size}"),
        ("`phase()`", "the phase name of each game's decision"),
        ("`describe_action(a)`", "the meaning of action `a` (the Action table)"),
        ("`events(game=0)`", "what the game's latest step (or reset) did, in order: `Event`s (kind, seat, "
                             "round, forced, `text_for(viewer)` hiding what that seat may not see); "
                             "see `ripmarket_env/games/ripmarket/events.py` and the Event log section of "
                             "docs/ARCHITECTURE.md"),
    ):
        w(_row(k, v))
    w("")
    w("A complete random game, two at a time:")
    w("")
    w("```python")
    lines.extend(ENGINE_EXAMPLE.rstrip("\n").split("\n"))
    w("```")
    w("")
    w("## Version History")
    w("")
    w("- **v0**: first version: 2–10 players, the rules of [RULES.md](RULES.md), the cards of "
      f"[CARDS.md](CARDS.md); `Discrete({table.size})` actions, {lay.size} observation "
      "features; rewards `win` (default) and `placement`.")
    w("")
    return "\n".join(lines)
