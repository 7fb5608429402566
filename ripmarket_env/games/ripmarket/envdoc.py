"""R.I.P. Market's parts of its environment reference (``docs/ENV.md``): the words only this
game has, given to the generic page (``ripmarket_env.app.envdoc``) through the spec's
``extras["env_doc"]`` hook. The tables come from the action table (``actions.py``), the
observation layout (``observation.py``), the decision phases (``state.py``) and the card
database, so the page cannot drift from the engine (``ripmarket envdoc --write docs/ENV.md``).
"""

from __future__ import annotations

from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.observation import SEAT
from ripmarket_env.games.ripmarket.state import MAX_SEATS

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


def sections(engine) -> dict:
    """The page's game-specific sections (see ``ripmarket_env.app.envdoc.render_env_markdown``)."""
    db = engine.cards
    table = ActionTable(db.n_living, db.n_shadow)
    lay = engine.obs_layout
    n_seat_pieces = sum(1 for p in lay.pieces if p.scope == SEAT)
    return {
        "title": "R.I.P. Market environment reference",
        "description": [
            "R.I.P. Market is a card battle royale for 2–10 players in which the dead keep playing: "
            "every round each player acquires a card and plays one, the lowest final score takes "
            "damage, and a player at 0 HP becomes a Ghost who haunts the living with Shadow cards. "
            "The last player alive wins. The full rules are in [RULES.md](RULES.md), the cards in "
            "[CARDS.md](CARDS.md).",
            "The environment is a turn-based multi-agent game with hidden information: one seat "
            "decides at a time, sees only its own hand and the public table, and chooses from a "
            "flat discrete action space filtered by a legal-action mask. Decisions whose single legal "
            "option follows from public facts are taken by the engine (R-12.1); a play from a hand "
            "of one design is asked all the same (its one action alone in the mask), so that "
            "nobody learns the hand from whose turn it is. "
            "The engine (`ripmarket_env.engine.Engine`) runs a batch of independent games at once; "
            "every array is batch-first.",
        ],
        "specs": [
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
        ],
        "action_intro": "The argument is the Market slot, the card design id, or the seat offset: `target` k "
                        "names the player k seats clockwise from the deciding seat. Which actions are legal "
                        "depends on the decision phase (next sections).",
        "action_columns": ("index", "kind", "argument", "meaning"),
        "action_rows": [(a, f"`{kind}`", arg, meaning) for a, kind, arg, meaning in table.rows(db)],
        "observation_intro": (
            f"The observation is seen from one seat, the *viewer* (R-12.3). The first "
            f"{lay.seat_start} features are global; then come {MAX_SEATS} seat blocks of "
            f"{lay.seat_size} features each. Seat block k (k = 0..{MAX_SEATS - 1}) describes the "
            f"player k seats clockwise from the viewer (block 0 is the viewer); the "
            f"{n_seat_pieces} seat pieces below are listed for block k, at the index shown plus "
            f"{lay.seat_size}·k. Blocks past the game's player count are all zero. "
            "`ripmarket_env.games.ripmarket.observation.named_view` splits a vector into these pieces."),
        "phase_intro": "Every decision belongs to one phase (the `phase` piece of the observation, "
                       "`Engine.phase()`). A living player's turn is `acquire` then `play`, then any choices "
                       "the played card asks for; a Ghost's turn is `ghost`, then `choose_victim` if it "
                       "plays a Shadow card.",
        "phases": PHASES,
        "rewards": [
            f"**Termination** ([R-9]({_rule_link('R-9 Game end')})): the game ends the moment "
            "only one living player remains, who wins (R-9.1). Round damage that would leave no "
            "one alive is not dealt, and the game goes on (sudden death, R-9.2; variant "
            "`no_survivor=\"share_win\"`: the players who died last share the win). A `max_rounds` "
            "safety cap (default 3 × players × start HP) ends the game as a shared draw among the "
            "living (R-9.3); it is a rule of the game, so it ends the game as a termination, never "
            "a truncation.",
            f"**Rewards** ([R-11]({_rule_link('R-11 Rewards (environment, not rulebook)')})): "
            "paid once, on the step that ends the game, to every seat, Ghosts included; every "
            "earlier step pays 0 (R-11.3). Default `reward_mode=\"win\"`: the winner gets +1 and "
            "every other seat −1/(n−1), n the starting player count; k co-winners each get "
            "(n−k)/(k(n−1)) (R-11.1). Variant `reward_mode=\"placement\"`: place i by elimination "
            "order is worth 1 − 2(i−1)/(n−1), ties averaged (R-11.2). Rewards always sum to zero.",
        ],
        "illegal_rule": "R-12.2",
        "env_names": {"gym": "Gym (`RipMarket-v0`)", "vector": "Vector (`RipMarketVecEnv`, `make_vec`)"},
        "engine_intro": "`ripmarket_env.engine.Engine(rules=RulesConfig(...), batch_size=B)` holds B games "
                        "with one rules config. Every game carries its own RNG: the same seed and actions "
                        "replay the same game whatever the batch size or row (R-12.4).",
        "step_note": " (R-12.2)",
        "events_note": "see `ripmarket_env/games/ripmarket/events.py` and the Event log section of "
                       "docs/ARCHITECTURE.md",
        "events_fields": "kind, seat, round, forced",
        "example": ENGINE_EXAMPLE,
        "example_rewards_rule": "R-11",
        "version": "**v0**: first version: 2–10 players, the rules of [RULES.md](RULES.md), the cards of "
                   f"[CARDS.md](CARDS.md); `Discrete({table.size})` actions, {lay.size} observation "
                   "features; rewards `win` (default) and `placement`.",
    }
