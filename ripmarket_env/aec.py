# noqa: D212, D415
"""
# R.I.P. Market (PettingZoo AEC)

| Import             | `from ripmarket_env import env` (wrapped) or `raw_env`                 |
|--------------------|-------------------------------------------------------------------------|
| Actions            | Discrete                                                                |
| Parallel API       | No (turn-based: one decision at a time)                                 |
| Manual Control     | No                                                                      |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, n = 2..10                 |
| Action Shape       | `Discrete(19 + DL + DS)`: 57 with the packaged 27 Living / 11 Shadow designs |
| Action Values      | `[0, num_actions - 1]`, legal ones flagged in `action_mask`             |
| Observation Shape  | `{"observation": (obs_size,) float32, "action_mask": (num_actions,) int8}` |
| Observation Values | per feature, see Observation below (`last_score` can be negative)       |

## Description

R.I.P. Market is a 2-10 player card battle royale. Every round each seat takes one turn
from the First Player clockwise: a living player acquires a card (top of the Living Deck
or a Market slot) and plays one; the lowest final score takes 1 damage. A player at 0 HP
becomes a Ghost: it keeps its seat, keeps taking turns and haunts the living with Shadow
cards. The last living player wins. The full rules are in `docs/RULES.md` (rule IDs
`R-x.y`); this env adds no rules of its own, it only maps agents onto the engine
(`ripmarket_env.engine.Engine`, one game).

`env(num_players=4, render_mode=None, rules=None, **rules_kwargs)` builds `raw_env` and
wraps it in PettingZoo's standard wrappers for classic games (`TerminateIllegalWrapper`
with `illegal_reward=-1`, `AssertOutOfBoundsWrapper`, `OrderEnforcingWrapper`), as
subclasses that read the game-state attributes (`agents`, `agent_selection`,
`terminations`, `truncations`, `infos`, `rewards`) straight from the raw env instead of
through one `__getattr__` per wrapper level; they behave as PettingZoo's own. Rule
variants are `RulesConfig` fields, given either as `rules=RulesConfig(...)` or as keywords
(`env(num_players=6, tie_rule="earliest")`).

## Specs

- **Agents and seats.** `player_i` sits in seat i. Everyone stays in `agents` for the
  whole game, Ghosts included: a dead player is not terminated, it keeps acting.
- **Turns.** `agent_selection` is always the seat that makes the next decision (the
  engine's current player). A turn with several decisions (acquire, play, then a target,
  a Market slot or a replacement; a Ghost's Shadow card, then its victim) is several
  steps by the same agent. Decisions with one legal option are taken by the engine and
  never reach an agent (R-12.1).
- **Seeding.** `reset(seed=s)` starts the game the engine starts from seed `s` (R-12.4);
  without a seed a fresh random seed is drawn and kept in `env.unwrapped.game_seed`.
- **Infos.** `infos[agent] = {"phase": <decision name>, "is_ghost": bool, "legal_moves":
  [action ids]}`; `legal_moves` is empty for every agent but the one deciding. The info
  dicts are made at `reset` and updated in place by each step (copy one to keep it).
- **Records.** `env.unwrapped.save_record(path)` writes the game so far as a JSON-lines
  record (`ripmarket_env.record`), which `ripmarket replay FILE` prints and verifies.
- **Rendering.** `render_mode="human"` prints the text table after every step, `"ansi"`
  returns it, `"rgb_array"` returns an `(H, W, 3)` uint8 picture (`ripmarket_env.render`).
  The render shows the public view; set `env.unwrapped.render_viewer = seat` to add that
  seat's hand, or `env.unwrapped.render_god = True` to see every hand.

## Observation

`observe(agent)` works for ANY agent at any time: what that seat may know (R-12.3), its
own hand and Shadow hand plus every public fact, never another hand or a face-down card
before its reveal. The vector is built from named pieces; seat blocks are relative to the
viewer (block 0 is the viewer, block k the player k seats clockwise). The full index table
is in `docs/ENV.md`; in brief:

| piece | size | content |
|---|---|---|
| `phase`, `is_actor`, `num_players`, `round`, `rule` | 8+1+9+1+4 | the decision, whose it is, table size, round, active rule |
| `deck_size`, `shadow_deck_size`, `discard` | 1+1+DL | deck sizes, the Living discard per design |
| `market` | 4·DL | one-hot design per Market slot |
| `hand`, `shadow_hand` | DL+DS | the viewer's own cards |
| `pending_card`, `pending_shadow`, `epilogue` | DL+DS+1 | the card whose choice is pending |
| 10 seat blocks | 10 × seat size | present, alive, HP, hand sizes, First Player, acted, actor, turn position, acquisition and Market take, played card (face-down hidden), target, attached Shadow cards, last damage, last score |

Bounds: every feature is in [0, 1] except counts per design (≤ copies / 3), hand sizes
(≤ deck size / 10 or / 3), attached Shadow counts (≤ 3), `last_damage` (≤ 10) and
`last_score` / 10, which is signed; its bound is derived from the card database (the
largest score any card combination can reach). `observation_bounds(engine)` computes them.
`action_mask` is the legal set for the deciding agent and all zeros for everyone else.

## Actions

One flat `Discrete` space, the engine's action table (`ripmarket_env/engine/actions.py`,
full table in `docs/ENV.md`):

| ids | meaning |
|---|---|
| 0 | take the top card of the Living Deck |
| 1-4 | take the card in Market slot 0-3 |
| 5 .. 5+DL-1 | play Living card design d (or: the card that replaces, in a replacement) |
| next 9 | choose the player k seats clockwise (k = 1..9): a target or a Ghost's victim |
| next 4 | choose Market slot 0-3 for a Market-tampering card |
| next 1 | a Ghost passes |
| next DS | a Ghost plays Shadow card design s (the victim is the next decision) |

## Rewards

Paid once, on the step that ends the game, to every agent, Ghosts included (R-11.3);
every other step pays 0. Default `reward_mode="win"` (R-11.1): the winner +1, every other
seat -1/(n-1); k co-winners share (n-k)/(k(n-1)) each. `reward_mode="placement"` (R-11.2)
pays by elimination order, linear from +1 to -1. Rewards always sum to zero. `last()`
returns the reward accumulated since the agent's previous step (`_cumulative_rewards`).

## Termination

The game ends when one living player remains (R-9.1), when the last players die together
(shared win, R-9.2) or at the `max_rounds` safety cap (a draw among the living, R-9.3).
Then every agent is terminated at once; each is stepped once more with `None` and leaves
`agents` (PettingZoo's `_was_dead_step`). `truncations` stay False (the cap is a rule of
the game, not a time limit).

## Illegal actions

- `raw_env.step(a)` with an action that is not legal right now raises
  `ripmarket_env.engine.IllegalActionError` (a `ValueError`) with the engine's message,
  naming the action, the decision and the legal set; the game is left exactly as it was,
  so the caller may catch it and try again.
- `env()` follows PettingZoo's `TerminateIllegalWrapper` convention instead: an action
  outside the mask ends the game, the offender gets -1, every other agent 0, and all
  agents are terminated (and truncated). An action outside the action space fails
  `AssertOutOfBoundsWrapper`'s assertion.

## Version History

* v0: first release (ripmarket 0.1.0).
"""

from __future__ import annotations

import operator
import secrets
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import kernels as K
from .engine.config import C_P, RulesConfig
from .engine.core import Engine, IllegalActionError, _k, seed_to_u32
from .engine.observation import encode_serial
from .engine.observation import observation_bounds as _observation_bounds
from .engine.state import PH_OVER, PHASE_NAMES

__all__ = ["env", "raw_env", "observation_bounds"]


def env(num_players: int | None = None, render_mode: str | None = None, rules: RulesConfig | None = None,
        **rules_kwargs) -> AECEnv:
    """``raw_env`` in PettingZoo's standard wrappers for classic games."""
    e = raw_env(num_players=num_players, render_mode=render_mode, rules=rules, **rules_kwargs)
    e = TerminateIllegalWrapper(e, illegal_reward=-1)
    e = AssertOutOfBoundsWrapper(e)
    e = OrderEnforcingWrapper(e)
    return e


# ------------------------------------------------------------------------------ wrappers
# PettingZoo's BaseWrapper forwards every attribute it does not hold through __getattr__,
# one call per wrapper level, and the AEC loop reads agent_selection, agents,
# terminations, truncations, infos and _cumulative_rewards several times per step. These
# subclasses of PettingZoo's wrappers read (and write) those attributes straight on the
# raw env and take unwrapped and the spaces from it in one call (no wrapper changes
# them); everything else is PettingZoo's code.
_STATE_ATTRS = ("agents", "agent_selection", "terminations", "truncations", "infos", "rewards",
                "_cumulative_rewards")


def _direct(name: str) -> property:
    get = operator.attrgetter(f"_raw_env.{name}")

    def put(self, value):
        setattr(self._raw_env, name, value)

    return property(get, put)


def _direct_after_reset(name: str) -> property:
    get = operator.attrgetter(f"_raw_env.{name}")

    def fetch(self):
        if self._has_reset:
            return get(self)
        return self.__getattr__(name)  # OrderEnforcingWrapper: "cannot be accessed before reset"

    def put(self, value):
        setattr(self._raw_env, name, value)

    return property(fetch, put)


class TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    __doc__ = wrappers.TerminateIllegalWrapper.__doc__

    def __init__(self, env, illegal_reward: float):
        self._raw_env = env.unwrapped
        super().__init__(env, illegal_reward)


class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    __doc__ = wrappers.AssertOutOfBoundsWrapper.__doc__

    def __init__(self, env):
        self._raw_env = env.unwrapped
        super().__init__(env)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    __doc__ = wrappers.OrderEnforcingWrapper.__doc__

    def __init__(self, env):
        self._raw_env = env.unwrapped
        super().__init__(env)


def _raw_unwrapped(self):
    return self._raw_env


def _raw_action_space(self, agent):
    return self._raw_env.action_space(agent)


def _raw_observation_space(self, agent):
    return self._raw_env.observation_space(agent)


for _cls in (TerminateIllegalWrapper, AssertOutOfBoundsWrapper, OrderEnforcingWrapper):
    _cls.unwrapped = property(_raw_unwrapped)
    _cls.action_space = _raw_action_space
    _cls.observation_space = _raw_observation_space
del _cls
for _name in _STATE_ATTRS:
    setattr(TerminateIllegalWrapper, _name, _direct(_name))
    setattr(AssertOutOfBoundsWrapper, _name, _direct(_name))
    setattr(OrderEnforcingWrapper, _name, _direct_after_reset(_name))
del _name


class _Discrete(spaces.Discrete):
    """``Discrete(n)`` whose ``contains`` answers Python ints and numpy int64 scalars
    directly (the same answer); it compares equal to, and pickles and copies as, a plain
    ``Discrete(n)``."""

    def __init__(self, n: int):
        super().__init__(n)
        self._size = int(n)

    def contains(self, x) -> bool:
        if type(x) is int or type(x) is np.int64:
            return 0 <= x < self._size
        return super().contains(x)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), int(self.start)))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


# ------------------------------------------------------------------------------ spaces
def observation_bounds(engine: Engine) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (low, high) float32 bounds of the observation vector: those of
    ``ripmarket_env.engine.observation.piece_bounds`` for the engine's card database."""
    return _observation_bounds(engine.cards)


# ------------------------------------------------------------------------------ the env
class raw_env(AECEnv, EzPickle):
    """R.I.P. Market as a PettingZoo AEC env: one agent per seat, Ghosts keep acting.

    See the module docstring for the full specification.
    """

    metadata = {
        "name": "ripmarket_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, num_players: int | None = None, render_mode: str | None = None,
                 rules: RulesConfig | dict | None = None, **rules_kwargs):
        EzPickle.__init__(self, num_players, render_mode, rules, **rules_kwargs)
        super().__init__()
        if rules is None:
            rules = RulesConfig(num_players=4 if num_players is None else num_players, **rules_kwargs)
        else:
            if rules_kwargs:
                raise ValueError(
                    "give the rules either as rules=RulesConfig(...) or as keyword fields, not both "
                    f"(got rules and {', '.join(sorted(rules_kwargs))})"
                )
            if isinstance(rules, dict):
                rules = RulesConfig.from_dict(rules)
            if not isinstance(rules, RulesConfig):
                raise TypeError(f"rules must be a RulesConfig or a dict of its fields, got {type(rules).__name__}")
            if num_players is not None and num_players != rules.num_players:
                raise ValueError(
                    f"num_players={num_players} disagrees with rules.num_players={rules.num_players}"
                )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; allowed: None, "
                + ", ".join(repr(m) for m in self.metadata["render_modes"])
            )
        self.render_mode = render_mode
        self.render_viewer: int | None = None
        self.render_god = False
        self.rules = rules
        self.engine = Engine(rules, batch_size=1)
        n = rules.num_players
        self.num_players = n
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        na = self.engine.num_actions
        low, high = observation_bounds(self.engine)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(na,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces = {a: _Discrete(na) for a in self.possible_agents}
        self.game_seed: int | None = None
        self._history: list[int] = []
        self._bind()

    # ---------------------------------------------------------------- engine views
    def _bind(self) -> None:
        st = self.engine.state
        self._state_ref = st
        self._S = _k(st)
        self._TB = _k(self.engine.tables)
        self._mask = st["mask"][0]
        self._step_rewards = st["step_rewards"][0]
        self._na = self.engine.num_actions
        self._obs_size = self.engine.obs_size
        self._cfg = self.engine.cfg
        self._offs = self.engine._offs
        self._no_mask = np.zeros(self._na, np.int8)
        self._viewer = np.zeros(1, np.int64)
        self._status = (True, 0, PH_OVER, 0)
        self._agent_bits = [(a, 1 << i) for i, a in enumerate(self.possible_agents)]

    # ---------------------------------------------------------------- spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; ``seed`` (a non-negative int) fixes it, None draws a fresh one.

        ``options`` is accepted for API compatibility and not used.
        """
        if seed is None:
            seed = secrets.randbits(63)
        seed = int(seed)
        s32 = seed_to_u32(seed)  # raises on a negative seed
        if self.engine.state is not self._state_ref:
            self._bind()
        self._status = K.reset_one(self._S, self._TB, self._cfg, 0, s32)
        self.engine.seeds[0] = seed
        self.game_seed = seed
        self._history = []
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._rewards_paid = False
        self._skip_agent_selection = None
        self._sync(rebuild=True)

    def _sync(self, rebuild: bool = False) -> None:
        """agent_selection and infos from the engine's current decision (``_status``).

        The info dicts are built by ``rebuild`` (reset) and updated in place after a step.
        """
        done, actor, phase, alive = self._status
        name = PHASE_NAMES[PH_OVER if done else phase]
        if rebuild:
            self.infos = {
                a: {"phase": name, "is_ghost": not alive & bit, "legal_moves": []} for a, bit in self._agent_bits
            }
            self._infos_alive = alive
        else:
            infos = self.infos
            for info in infos.values():
                info["phase"] = name
            if alive != self._infos_alive:
                for a, bit in self._agent_bits:
                    infos[a]["is_ghost"] = not alive & bit
                self._infos_alive = alive
            if self._infos_legal is not None:
                infos[self._infos_legal]["legal_moves"] = []
        self._infos_legal = None
        if not done:
            agent = self.possible_agents[actor]
            self.infos[agent]["legal_moves"] = self._mask.nonzero()[0].tolist()
            self._infos_legal = agent
            self.agent_selection = agent

    def refresh(self) -> None:
        """Re-read the engine after changing ``self.engine.state`` from outside the env."""
        self._bind()
        self._status = K.status_one(self._S, self._cfg, 0)
        self._sync(rebuild=True)

    # ---------------------------------------------------------------- step
    def _illegal(self, action) -> IllegalActionError:
        done, _actor, phase, _alive = self._status
        legal = [] if done else self._mask.nonzero()[0].tolist()
        return IllegalActionError(
            0, action, legal, PHASE_NAMES[PH_OVER if done else phase], self.engine.describe_action
        )

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            a = operator.index(action)
        except TypeError:
            raise self._illegal(action) from None
        if not (0 <= a < self._na and self._mask[a]):
            raise self._illegal(a)
        self._cumulative_rewards[agent] = 0.0
        self._status = K.step_one(self._S, self._TB, self._cfg, 0, a)
        self._history.append(a)
        if self._status[0]:  # the game ended: the only step that pays
            r = self._step_rewards
            for i, ag in enumerate(self.possible_agents):
                self.rewards[ag] = float(r[i])
                self.terminations[ag] = True
            self._accumulate_rewards()
        elif self._rewards_paid:
            for ag in self.rewards:
                self.rewards[ag] = 0.0
        self._rewards_paid = self._status[0]
        self._sync()
        if self.render_mode == "human":
            self.render()

    # ---------------------------------------------------------------- observe
    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        obs = np.empty((1, self._obs_size), np.float32)
        self._viewer[0] = seat
        encode_serial(self._S, self._TB, self._cfg, self._viewer, self._offs, obs)
        status = self._status
        mask = self._mask.copy() if status[1] == seat and not status[0] else self._no_mask.copy()
        return {"observation": obs[0], "action_mask": mask}

    # ---------------------------------------------------------------- render
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode "
                '(e.g. ripmarket_env.env(render_mode="ansi")).'
            )
            return None
        from .render import render_rgb, render_text

        if self.render_mode == "rgb_array":
            return render_rgb(self.engine, 0, viewer=self.render_viewer, god=self.render_god)
        text = render_text(self.engine, 0, viewer=self.render_viewer, god=self.render_god)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass

    # ---------------------------------------------------------------- records
    def save_record(self, path) -> Path:
        """Write the current game (from its seed, every action so far) as a record file."""
        from .record import Recorder

        if self.game_seed is None:
            raise RuntimeError("no game to save: call reset() first")
        rec = Recorder.new(self.rules, self.game_seed, cards=self.engine.cards)
        for a in self._history:
            rec.step(a)
        return rec.save(path)
