"""The environment reference of every game (``ripmarket envdoc --game G``), generated from the code.

:func:`render_env_markdown` builds a game's page from its ``GameSpec``: the action names,
the observation layout (``Layout.table_rows``), the decision phases, the reward range and
the envs every game shares (illegal actions, the engine API). A game may give its own
words for any section through ``spec.extras["env_doc"](engine) -> dict`` (R.I.P. Market's:
``games/ripmarket/envdoc.py``); a game without the hook gets the page from its spec alone.
The page cannot drift from the engine: a test compares each committed page
(``doc_path(spec)``) with the generated text.
"""

from __future__ import annotations

import re

from ripmarket_env.core.spec import GameSpec

#: What a finished game reports, for the phase table of a game without its own words.
OVER_PHASE = ("the game has ended; no decision", "none (the mask is all False)", "")


def doc_path(spec: GameSpec) -> str:
    """Where a game's reference lives: ``extras["docs_dir"]`` (the primary game's docs are the
    top of ``docs/``) or ``docs/games/<id>/``, then ``ENV.md``."""
    return f"{spec.extras.get('docs_dir', 'docs/games/' + spec.id)}/ENV.md"


def regen_command(spec: GameSpec) -> str:
    return f"ripmarket envdoc --game {spec.id} --write {doc_path(spec)}"


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _row(*cells) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _max_seats(engine) -> int:
    lay = engine.obs_layout
    return (lay.size - lay.seat_start) // lay.seat_size if lay.seat_size else 0


def _generic(spec: GameSpec, engine) -> dict:
    """Every section from the spec alone."""
    lay = engine.obs_layout
    seats = _max_seats(engine)
    players = f"{spec.min_players}–{spec.max_players}"
    counts = spec.extras.get("player_counts")
    if counts:
        players = ", ".join(str(n) for n in counts)
    lo, hi = spec.reward_range
    first = next((p.strip() for p in re.split(r"\n\s*\n", spec.doc) if p.strip() and not p.lstrip().startswith("#")),
                 f"{spec.title}, a game of the ripmarket zoo.")
    names = spec.action_names(engine)
    example = (f'import numpy as np\nimport ripmarket_env.games\n\nspec = ripmarket_env.games.get("{spec.id}")\n'
               f"eng = spec.make_engine(spec.make_rules({spec.default_players}), 2)\n"
               "eng.reset([7, 8])                      # one seed per game\n"
               "rng = np.random.default_rng(0)\n"
               "while not eng.terminated.all():\n"
               "    seats = eng.current_player()       # the deciding seat per game, -1 once it is over\n"
               "    mask = eng.legal_mask()            # (2, num_actions) bool\n"
               "    actions = np.array([rng.choice(np.flatnonzero(m)) if s >= 0 else -1\n"
               "                        for s, m in zip(seats, mask)])\n"
               "    rewards, terminated = eng.step(actions)\n"
               "print(eng.rewards())                   # final rewards per seat\n"
               "twin = eng.clone([0])                  # an independent copy of game 0\n")
    return {
        "title": f"{spec.title} environment reference",
        "description": [
            " ".join(first.split()),
            f"The environment is a turn-based multi-agent game: one seat decides at a time, sees what "
            f"its seat may see, and chooses from a flat discrete action space filtered by a legal-action "
            f"mask. `ripmarket_env.make(\"{spec.id}\")` gives the PettingZoo AEC env (`{spec.env_name}`), "
            f"`gymnasium.make(\"{spec.gym_id}\")` the single-agent env; the engine runs a batch of "
            "independent games at once and every array is batch-first.",
        ],
        "specs": [
            ("Players", f"{players} per game (`num_players`), one seat each"),
            ("Action space", f"`Discrete({engine.num_actions})`: one flat table for every decision (below)"),
            ("Action dtype", "integer (`int64`); `-1` skips a game in a batched `step`"),
            ("Legal-action mask", f"`bool`, shape `(batch, {engine.num_actions})`; all False once a game is over"),
            ("Observation", f"`float32`, shape `(batch, {lay.size})`: {lay.seat_start} global features "
                            f"+ {seats} seat blocks × {lay.seat_size} features"),
            ("Rewards", f"`float32`, shape `(batch, players)`, in [{lo:g}, {hi:g}]: paid on the step that "
                        "ends the game"),
            ("Termination", "`bool`, shape `(batch,)`"),
        ],
        "action_intro": "Which actions are legal depends on the decision phase (next sections).",
        "action_columns": ("index", "meaning"),
        "action_rows": [(a, n) for a, n in enumerate(names)],
        "observation_intro": (
            f"The observation is seen from one seat, the *viewer*. The first {lay.seat_start} features "
            f"are global; then come {seats} seat blocks of {lay.seat_size} features each (seat block k "
            f"at the index shown plus {lay.seat_size}·k). Blocks past the game's player count are zero."),
        "phase_intro": "Every decision belongs to one phase (`Engine.phase()`).",
        "phases": {},
        "rewards": [f"**Rewards** are paid once, on the step that ends the game, to every seat, in "
                    f"[{lo:g}, {hi:g}]; every earlier step pays 0."],
        "illegal_rule": "",
        "env_names": {"gym": f"Gym (`{spec.gym_id}`)", "vector": "Vector (`make_vec`, SB3 `VecEnv`)"},
        "engine_intro": f"`spec.make_engine(rules, batch_size=B)` (`spec = ripmarket_env.games.get(\"{spec.id}\")`) "
                        "holds B games with one rules config. Every game carries its own RNG: the same seed and "
                        "actions replay the same game whatever the batch size or row.",
        "step_note": "",
        "events_note": "the game's events module",
        "events_fields": "kind, seat, forced",
        "example": example,
        "version": f"**v0**: first version: {players} players; `Discrete({engine.num_actions})` actions, "
                   f"{lay.size} observation features.",
    }


def render_env_markdown(spec: GameSpec) -> str:
    """The environment reference of ``spec``'s game, as Markdown."""
    engine = spec.make_engine(spec.make_rules(spec.default_players), 1)
    hook = spec.extras.get("env_doc")
    s = {**_generic(spec, engine), **(hook(engine) if hook is not None else {})}
    lay = engine.obs_layout
    lines: list[str] = []
    w = lines.append

    w(f"# {s['title']}")
    w("")
    w(f"<!-- Generated from the engine. Do not edit by hand: run `{regen_command(spec)}`. -->")
    w("")
    w("## Description")
    for para in s["description"]:
        w("")
        w(para)
    w("")
    w("## Specs")
    w("")
    w("| | |")
    w("|---|---|")
    for k, v in s["specs"]:
        w(_row(k, v))
    w("")
    w("## Action table")
    w("")
    w(s["action_intro"])
    w("")
    w("| " + " | ".join(s["action_columns"]) + " |")
    w("|" + "---|" * len(s["action_columns"]))
    for row in s["action_rows"]:
        w(_row(*row))
    w("")
    w("## Observation table")
    w("")
    w(s["observation_intro"])
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
    w(s["phase_intro"])
    w("")
    phases = s["phases"]
    names = [*spec.phase_names] + ([engine.over_phase] if engine.over_phase not in spec.phase_names else [])
    if phases:
        w("| # | phase | decision | legal actions | rules |")
        w("|---|---|---|---|---|")
        for i, name in enumerate(spec.phase_names):
            what, legal, rules = phases[name]
            w(_row(i, f"`{name}`", what, legal, rules))
    else:
        w("| # | phase |")
        w("|---|---|")
        for i, name in enumerate(names):
            w(_row(i, f"`{name}`"))
    w("")
    w("## Rewards and Termination")
    w("")
    for item in s["rewards"]:
        w(f"- {item}")
    w("- `Engine.step` returns the rewards paid by that step; `Engine.rewards()` holds the "
      "final rewards once a game is terminated.")
    w("")
    w("## Illegal actions")
    w("")
    rule = f" ({s['illegal_rule']})" if s["illegal_rule"] else ""
    w("The engine rejects an illegal action with `IllegalActionError` (a `ValueError`) naming "
      f"the game, the action and the legal actions, and changes nothing{rule}. The envs add "
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
        (s["env_names"]["gym"], "raises; the game is unchanged",
         "the episode ends (`terminated=True`, reward `illegal_reward`, `info[\"illegal_action\"]` True), "
         "the game is not stepped"),
        (s["env_names"]["vector"], "raises; no game of the batch changes",
         "only the offending games end (reward `illegal_reward`, done, terminal observation = the "
         "observation the action answered) and are dealt again; the others step as usual. SB3: "
         "`infos[i][\"illegal_action\"]` True; Gymnasium: `info[\"illegal_action\"]` `(num_envs,)` bool"),
    ):
        w(_row(k, r, t))
    w("")
    w("Out-of-range integers count as illegal actions. In the vector envs a batch has shape "
      "`(num_envs,)`, one integer per game: a malformed batch (non-integer actions, any other shape) "
      "raises `ValueError` in both modes and changes nothing, and `num_envs` must be a positive integer. "
      "The AEC env's `step`, `last` and `observe` without a game (before the first `reset`, or once "
      "every agent has left `agents`) raise `RuntimeError` saying to call `reset()`; an agent that is not "
      "one of `possible_agents` raises `UnknownAgentError` (a `KeyError` and a `ValueError`) naming the "
      "allowed agents. The game's seed is never in an observation or the infos (it would deal every "
      "hidden card again): it is the env's attribute `game_seed`.")
    w("")
    w("## Copies and pickling")
    w("")
    w("`copy.deepcopy(env)` of the AEC env (`raw_env`, or `env()` with its PettingZoo wrappers) "
      "copies the game as it stands, mid-game included: the engine is cloned (`Engine.clone`) and "
      "the agents, rewards, terminations, infos and the action history copied, so a search can "
      "play on in the copy and leave the original where it was; the copy and the original then "
      "go the same way under the same actions (the conformance suite checks both for every game). "
      "Pickling rebuilds the env from its constructor's arguments, as PettingZoo's classic envs "
      "(`EzPickle`) do: a worker receives a fresh env, to `reset`. To carry a game across "
      "processes, send its record (`env.save_record`) or the engine's state.")
    w("")
    w("## Parallel env")
    w("")
    scale_out = "../" * (doc_path(spec).count("/") - 1) + "SCALE_OUT.md"
    w(f"`ripmarket_env.parallel_env(\"{spec.id}\", num_players=..., obs_format=\"dict\")` (or "
      f"`ripmarket_env.make(\"{spec.id}\", parallel=True)`) is a PettingZoo `ParallelEnv` of the "
      "game (`ripmarket_env/envs/parallel.py`, the same for every game): every seat gets an observation "
      "and sends an action on every step, so parallel-API trainers (TorchRL's `PettingZooWrapper`, "
      "AgileRL's IPPO, RLlib's `ParallelPettingZooEnv`) take the turn-based game as it is; "
      f"[SCALE_OUT.md]({scale_out}#the-parallel-env-in-parallel-api-trainers) has each trainer's lines.")
    w("")
    w(f"- **Wait.** The action space is `Discrete({engine.num_actions + 1})`: the game's actions and, last, "
      f"*wait* (`{engine.num_actions}`, `env.wait_action`). The seat deciding now has its legal actions (wait "
      "illegal); every other seat has exactly one legal action, wait, also once the game is over "
      "(and before the first `reset`: a seat's `action_space(agent).sample()` is then wait), so "
      "no mask is ever empty. Only the deciding seat's action is applied; the other seats' actions "
      "are ignored whatever they are, so an idle seat never changes the game. A missing or illegal "
      "action of the deciding seat raises and changes nothing (`illegal_action=\"terminate\"`: as in "
      "the AEC env).")
    w(f"- **Observations** (`obs_format`): `\"dict\"` the AEC env's `{{\"observation\", \"action_mask\"}}` "
      f"(mask of {engine.num_actions + 1}, TorchRL, PettingZoo's `parallel_api_test`); `\"rllib\"` the same "
      "under the keys of RLlib's action-masking RLModule, `{\"observations\", \"action_mask\"}`; "
      "`\"box\"` the float32 observation alone, the mask in the infos (AgileRL).")
    w("- **Infos** fixed numeric types only: `phase_id` (int), the game's seat flag (bool), "
      "`acting` (bool) and, with `\"box\"`, `action_mask` (a list of 0/1 ints: AgileRL reads masks "
      "there; TorchRL refuses a mask in both the observation and the infos).")
    w("- **Rewards and termination** as in the AEC env: 0 until the last step, which pays every seat "
      "and terminates every seat; `agents` is then empty.")
    w("- **Checked** in every `obs_format` with PettingZoo's own `parallel_api_test` and "
      "`parallel_seed_test` (`tests/test_aec.py`).")
    w("")
    w("## Engine API")
    w("")
    w(s["engine_intro"])
    w("")
    w("| method | returns |")
    w("|---|---|")
    na, size = engine.num_actions, lay.size
    for k, v in (
        ("`reset(seeds, games=None)`", "starts new games, one seed per game (all rows, or the rows in `games`)"),
        ("`current_player()`", "`(B,)` int64: the seat that decides next, -1 for finished games"),
        ("`legal_mask()`", f"`(B, {na})` bool: the legal actions of each game's decision"),
        ("`observe(viewers=None, out=None)`", f"`(B, {size})` float32: each game seen by one seat "
                                              "(default: the deciding seat); any seat may view"),
        ("`step(actions)`", "`(rewards (B, players) float32, terminated (B,) bool)`; raises "
                            f"`IllegalActionError` and changes nothing if an action is illegal{s['step_note']}"),
        ("`clone(games=None)`", "a new `Engine` holding independent copies of the given games"),
        ("`rewards()`", "`(B, players)` float32: final rewards of terminated games"),
        ("`terminated`", "`(B,)` bool: which games are over"),
        ("`num_actions`, `obs_size`", f"{na}, {size}"),
        ("`phase()`", "the phase name of each game's decision"),
        ("`describe_action(a)`", "the meaning of action `a` (the Action table)"),
        ("`events(game=0)`", f"what the game's latest step (or reset) did, in order: `Event`s ({s['events_fields']}, "
                             "`text_for(viewer)` hiding what that seat may not see); "
                             f"{s['events_note']}"),
    ):
        w(_row(k, v))
    w("")
    w("`legal_mask()`, `terminated`, `rewards()` and the arrays `step` returns are read-only views")
    w("of the engine's state, not copies: the next `step` or `reset` changes them (copy one to")
    w("keep it), and writing into one raises `ValueError` instead of changing the games.")
    w("")
    w("A complete random game, two at a time:")
    w("")
    w("```python")
    lines.extend(s["example"].rstrip("\n").split("\n"))
    w("```")
    w("")
    w("## Version History")
    w("")
    w(f"- {s['version']}")
    w("")
    return "\n".join(lines)
