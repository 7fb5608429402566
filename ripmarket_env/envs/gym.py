"""The single-agent Gymnasium face of any game of the zoo (R.I.P. Market: ``RipMarket-v0``).

``gym_env_class(spec)`` binds ``GameEnv`` to a game. A learner sits in one seat; every
other seat is played by an opponent agent (``ripmarket_env.core.agent`` protocol). The learner decides in every phase of the game, as a living player
(acquire, play, choose a target or Market slot, choose a replacement) and as a Ghost
(pass or play a Shadow card, choose its victim). ``step(action)`` applies the learner's
action, then lets the opponents act until the learner must decide again or the game ends.

    >>> import gymnasium as gym
    >>> import ripmarket_env  # registers RipMarket-v0 (and every game's id)
    >>> env = gym.make("RipMarket-v0", num_players=4, learner_seat="random")
    >>> obs, info = env.reset(seed=0)
    >>> mask = info["action_mask"]            # or env.unwrapped.action_masks()
    >>> obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))

Specs
    ================== ====================================================================
    Action space       ``Discrete(num_actions)``: the engine's flat action table
                       (``ripmarket_env.games.ripmarket.actions``, ``docs/ENV.md``);
                       ``action_space.sample()`` draws a legal action (``LegalDiscrete``)
    Observation space  ``Box(float32, (obs_size,))``: the engine observation seen from the
                       learner's seat (``ripmarket_env.games.ripmarket.observation``); bounds per
                       piece, see ``observation_space_for``
    Action mask        ``env.action_masks()`` (sb3-contrib MaskablePPO convention) and
                       ``info["action_mask"]``: int8 0/1, ``(num_actions,)`` (as the AEC
                       env's; ``action_space.sample(mask=...)`` takes it as it is)
    Infos              fixed types only: ``action_mask``, ``learner_seat`` (int),
                       ``phase_id`` (int, indexes ``spec.phase_names``),
                       ``illegal_action`` (bool, see below); ``verbose_infos=True``
                       adds ``phase`` (the decision's name). The game's seed is not in
                       the infos (with it the learner could deal the game again and see
                       every hidden card); records read it from ``env.unwrapped.game_seed``
    Reward             0 on every step but the last; at termination the learner's final
                       reward (R-11: ``reward_mode`` "win" or "placement")
    Termination        the game ends (R-9); ``truncated`` is always False (the engine's
                       ``max_rounds`` safety cap ends every game)
    ================== ====================================================================

Opponents
    ``opponents`` is one agent (shared by every other seat) or a list of ``num_players - 1``
    agents; an agent is an object with ``act(obs, mask)`` / ``act_batch(obs, masks)``, or
    a name when the env class has an ``agent_resolver`` (``ripmarket_env.gym_env.RipMarketEnv``
    and ``gymnasium.make`` resolve names with ``agents.make``). ``opponents[k]`` plays the seat ``k + 1`` seats
    clockwise from the learner. Every opponent sees only its own seat's observation and
    mask. On every ``reset`` an opponent with a ``reset(seed=...)`` method is reseeded from
    the env's random generator, so ``reset(seed=s)`` replays the same episode for the same
    learner actions. Default: random agents. When every opponent is the uniformly random
    agent (``ripmarket_env.core.agent.RandomAgent``), the opponents' moves run inside one
    compiled call (the game's batch kernels), each a uniformly random legal action from a stream the
    env's generator seeds at every reset; ``compiled_opponents=False`` keeps them in Python.

Seeding
    ``reset(seed=s)`` deals the game ``Engine.reset([s])`` deals; ``reset()`` draws the next
    game seed from the env's generator (``np_random``). The episode's game seed is the env's
    attribute ``game_seed`` (``env.unwrapped.game_seed``), never part of an observation or
    the infos. With ``learner_seat="random"`` the seat is drawn from that generator too.

Illegal actions
    ``illegal_action="raise"`` (the default): an action outside the learner's legal set raises
    ``ripmarket_env.engine.IllegalActionError`` (a ``ValueError``) naming the action and the
    legal actions; the game is left unchanged and the env can keep stepping. Stepping a
    finished game without ``reset`` raises ``RuntimeError``. The one exception is an action
    drawn by ``action_space.sample()`` (a ``SampledAction``, "a random legal action"): used
    at a later decision than the one it was drawn at, it is redrawn among that decision's
    legal actions.
    ``illegal_action="terminate"`` (for algorithms without action masking): an illegal
    action ends the episode instead (``terminated=True``, reward ``illegal_reward``, -1 by
    default, ``info["illegal_action"]`` True); the game is not stepped.

The mask after termination is all True (nothing is decided there; this keeps masked
policies well defined when a caller evaluates them on a terminal observation).

Rendering
    ``render_mode="ansi"`` returns and ``"human"`` prints ``ripmarket_env.games.ripmarket.render.render_text``
    of the game seen from the learner's seat, when that module is present.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ripmarket_env.core.agent import RandomAgent
from ripmarket_env.core.engine import SEED_OR_NONE, Engine, IllegalActionError, check_seed, given, kernel_view as _k
from ripmarket_env.core.spec import GameSpec

MAX_SEED = 2**63 - 1
# A game in which the learner never faces a decision (every one of its decisions taken
# by the engine, ``core.events``) ends inside reset; reset then deals the next game, at most this often.
_MAX_REDEALS = 100


# ---------------------------------------------------------------------------------------
# Pieces shared with the vector env
# ---------------------------------------------------------------------------------------
def resolve_opponents(opponents, num_players: int, resolver=None) -> tuple[list, bool]:
    """(agents, shared): one agent for every other seat, or ``num_players - 1`` agents.

    Agents given by name or file (a ``str`` or ``os.PathLike``: an export or a checkpoint)
    are built with ``resolver(name)`` (the caller's, e.g. ``agents.resolve``); without a
    resolver only agent objects are accepted.
    """

    def build(a):
        if isinstance(a, (str, os.PathLike)):
            if resolver is None:
                raise TypeError(
                    f"opponent {str(a)!r} is a name or file, but this env takes agent objects (with act(obs, mask) "
                    "and act_batch(obs, masks)); build it first, e.g. agents.make(name)"
                )
            return resolver(a)
        if not (callable(getattr(a, "act", None)) and callable(getattr(a, "act_batch", None))):
            raise TypeError(
                "an opponent must be an agent object with act(obs, mask) and act_batch(obs, masks)"
                + (" or an agent name, export or checkpoint file" if resolver is not None else "")
                + f", got {type(a).__name__}"
            )
        return a

    if opponents is None:
        opponents = RandomAgent()
    if isinstance(opponents, (str, os.PathLike)) or not isinstance(opponents, Sequence):
        return [build(opponents)], True
    opponents = list(opponents)
    if len(opponents) == 1:
        return [build(opponents[0])], True
    if len(opponents) != num_players - 1:
        raise ValueError(
            f"opponents: give one agent for all other seats or one per other seat "
            f"({num_players - 1} for {num_players} players), got {len(opponents)}"
        )
    return [build(a) for a in opponents], False


def reseed_agents(agent_list: list, rng: np.random.Generator) -> None:
    """Give every agent with a ``reset(seed=...)`` method a fresh seed drawn from ``rng``."""
    seeds = rng.integers(0, MAX_SEED, size=len(agent_list))
    for agent, s in zip(agent_list, seeds):
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset(seed=int(s))


def check_learner_seat(learner_seat, num_players: int):
    if isinstance(learner_seat, str):
        if learner_seat != "random":
            raise ValueError(f"learner_seat must be a seat 0..{num_players - 1} or 'random', got {learner_seat!r}")
        return learner_seat
    if isinstance(learner_seat, (bool, np.bool_)) or not isinstance(learner_seat, (int, np.integer)):
        raise ValueError(f"learner_seat must be a seat 0..{num_players - 1} or 'random', got {learner_seat!r}")
    if not 0 <= learner_seat < num_players:
        raise ValueError(f"learner_seat must be a seat 0..{num_players - 1} or 'random', got {learner_seat}")
    return int(learner_seat)


def observation_space_for(spec: GameSpec, engine: Engine) -> spaces.Box:
    """The float32 Box of one observation, with the game's bounds per feature."""
    low, high = spec.observation_bounds(engine)
    return spaces.Box(low=low, high=high, dtype=np.float32)


class SampledAction(int):
    """An action drawn by ``LegalDiscrete.sample()``: a legal action of the decision it
    was drawn at, together with the uniform number ``u`` it was drawn with.

    Stepping it at another decision (tools such as Gymnasium's ``check_env`` draw an
    action, then reset, then step it) redraws it with the same ``u`` among that decision's
    legal actions, so it always stands for "a uniformly random legal action". A plain
    integer is never redrawn: an illegal one raises.
    """

    u: float

    def __new__(cls, value: int, u: float):
        obj = super().__new__(cls, value)
        obj.u = float(u)
        return obj

    def __reduce__(self):
        return (SampledAction, (int(self), self.u))

    def redraw(self, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            return int(self)
        return int(legal[min(int(self.u * legal.size), legal.size - 1)])


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws a legal action of the env's
    current decision (a ``SampledAction``), so generic tools that step with
    ``action_space.sample()`` (the Gymnasium and SB3 env checkers) play legal moves. With a
    ``mask`` or ``probability`` it is the plain Gymnasium sampler. It compares equal to,
    and pickles and copies as, a plain ``Discrete(n)``.
    """

    def __init__(self, n: int, legal_mask_fn=None, seed=None):
        super().__init__(n, seed=seed)
        self._legal_mask_fn = legal_mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._legal_mask_fn is not None:
            u = float(self.np_random.random())
            return SampledAction(SampledAction(0, u).redraw(self._legal_mask_fn()), u)
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), int(self.start)))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


# ---------------------------------------------------------------------------------------
# The env
# ---------------------------------------------------------------------------------------
_CLASSES: dict[str, type] = {}


def gym_env_class(spec: GameSpec) -> type:
    """The single-agent env class of a game (one class per game, made once)."""
    if spec.id not in _CLASSES:
        _CLASSES[spec.id] = type("GymEnv", (GameEnv,), {
            "game": spec, "metadata": {**GameEnv.metadata, "name": spec.id},
        })
    return _CLASSES[spec.id]


class GameEnv(gymnasium.Env):
    """One learner seat against opponent agents; see the module docstring.

    Args:
        num_players: the game's player count (or give ``rules``).
        opponents: one agent or name for every other seat, or one per other seat
            (``opponents[k]`` sits ``k + 1`` seats clockwise from the learner); default
            ``"random"``.
        learner_seat: a seat ``0..num_players-1``, or ``"random"`` (drawn each episode).
        rules: the game's rules config (or a dict of its fields) for rule variants; or
            give its fields as keywords (``mode="ffa"``), as ``ripmarket_env.make`` takes them.
        render_mode: None, ``"ansi"``, ``"human"`` or ``"rgb_array"``.
        illegal_action: ``"raise"`` or ``"terminate"`` (see the module docstring).
        verbose_infos: add the decision's name (a str) to the infos.
    """

    game: GameSpec
    #: ``resolver(name) -> agent`` for opponents given by name (None: objects only)
    agent_resolver = None
    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1, "name": "game"}

    def __init__(
        self,
        num_players: int | None = None,
        opponents=None,
        learner_seat: int | str = 0,
        rules=None,
        render_mode: str | None = None,
        compiled_opponents: bool = True,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        verbose_infos: bool = False,
        **rules_kwargs,
    ):
        super().__init__()
        spec = self.game
        if illegal_action not in ("raise", "terminate"):
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed; allowed: 'raise', 'terminate'")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.verbose_infos = bool(verbose_infos)
        self._forfeit = False
        self.rules = spec.make_rules(num_players, rules, **rules_kwargs)
        self.num_players = self.rules.num_players
        self.engine = spec.make_engine(self.rules, 1)
        self.opponents, self._shared = resolve_opponents(opponents, self.num_players, self.agent_resolver)
        self._learner_seat_arg = check_learner_seat(learner_seat, self.num_players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.action_space = LegalDiscrete(self.engine.num_actions, self._legal_bool)
        self.observation_space = observation_space_for(spec, self.engine)
        self.learner_seat = 0 if self._learner_seat_arg == "random" else self._learner_seat_arg
        self.game_seed: int | None = None
        self._act = np.full(1, -1, np.int64)
        self._viewer = np.zeros(1, np.int64)
        self._obs = np.empty((1, self.engine.obs_size), np.float32)
        self._started = False
        self.compiled_opponents = bool(compiled_opponents)
        self._opp_rng = np.zeros(1, np.uint64)  # the compiled random opponents' stream
        self._random_agent = RandomAgent
        self._phase_names = spec.phase_names
        self._k_step_one = spec.fast.step_one
        self._k_observe = spec.fast.observe_one
        self._k_random_opponents = spec.batch.random_opponents_one
        self._bind()

    def _bind(self) -> None:
        eng = self.engine
        self._kargs = (_k(eng.state), _k(eng.tables), eng.cfg)

    # ------------------------------------------------------------------ queries
    @property
    def terminated(self) -> bool:
        return self._forfeit or bool(self.engine.terminated[0])

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, int8 0/1 ``(num_actions,)`` (all 1 once the game is over)."""
        if not self._started or self.terminated:
            return np.ones(self.engine.num_actions, dtype=np.int8)
        return self.engine.legal_mask()[0].astype(np.int8)

    def _legal_bool(self) -> np.ndarray:
        return self.action_masks().astype(bool)

    def _observation(self) -> np.ndarray:
        self._viewer[0] = self.learner_seat
        S, TB, cfg = self._kargs
        self._k_observe(S, TB, cfg, self._viewer, self.engine._offs, self._obs)
        return self._obs[0].copy()

    def _random_opponents(self) -> bool:
        """Every opponent is the uniformly random agent: they play inside one compiled call."""
        return self.compiled_opponents and all(type(a) is self._random_agent for a in self.opponents)

    def _info(self) -> dict[str, Any]:
        names = self._phase_names
        pid = names.index("game_over") if self.terminated and "game_over" in names else int(self.engine.state["phase"][0])
        info = {
            "action_mask": self.action_masks(),
            "learner_seat": int(self.learner_seat),
            "phase_id": pid,
            "illegal_action": False,
        }
        if self.verbose_infos:
            info["phase"] = "game_over" if self.terminated else names[pid]
        return info

    # ------------------------------------------------------------------ play
    def _play_opponents(self) -> float:
        """Opponents act until the learner decides or the game ends; the learner's reward."""
        eng = self.engine
        if self._random_opponents():
            S, TB, cfg = self._kargs
            return float(self._k_random_opponents(S, TB, cfg, 0, self.learner_seat, self._opp_rng))
        reward = 0.0
        P = self.num_players
        while not eng.terminated[0]:
            actor = int(eng.state["actor"][0])
            if actor == self.learner_seat:
                break
            self._viewer[0] = actor
            eng.observe(self._viewer, out=self._obs)
            agent = self.opponents[0 if self._shared else (actor - self.learner_seat) % P - 1]
            a = agent.act(self._obs[0].copy(), eng.legal_mask()[0].copy())
            self._act[0] = int(a)
            rewards, _ = eng.step(self._act)
            reward += float(rewards[0, self.learner_seat])
        return reward

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:  # a Python or numpy integer from 0 up; nothing else, bools included
            seed = check_seed(seed, SEED_OR_NONE)
        super().reset(seed=seed)
        for _ in range(_MAX_REDEALS):
            if seed is not None:
                game_seed, seed = int(seed), None
            else:
                game_seed = int(self.np_random.integers(0, MAX_SEED))
            if self._learner_seat_arg == "random":
                self.learner_seat = int(self.np_random.integers(0, self.num_players))
            reseed_agents(self.opponents, self.np_random)
            if self._random_opponents():
                self._opp_rng[0] = self.np_random.integers(0, MAX_SEED, dtype=np.uint64)
            self.game_seed = game_seed
            self._forfeit = False
            self.engine.reset([game_seed])
            self._bind()
            self._started = True
            self._play_opponents()
            if not self.terminated:
                break
        else:  # pragma: no cover - needs a learner without a real decision in 100 deals
            raise RuntimeError(f"no game in {_MAX_REDEALS} deals gave the learner a decision")
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.terminated:
            raise RuntimeError("the game is over; call reset() to start a new one")
        try:
            a = _as_action(action)
        except ValueError:
            if self.illegal_action != "terminate":
                raise
            a = -1
        mask = self.engine.legal_mask()[0]
        if isinstance(action, SampledAction) and not (0 <= a < mask.shape[0] and mask[a]):
            a = action.redraw(mask)
        if not (0 <= a < mask.shape[0] and mask[a]):
            if self.illegal_action == "terminate":
                self._forfeit = True
                info = self._info()
                info["illegal_action"] = True
                return self._observation(), self.illegal_reward, True, False, info
            raise IllegalActionError(
                0, a, self.engine.legal_actions(0), self._phase_names[self.engine.state["phase"][0]],
                self.engine.describe_action,
            )
        S, TB, cfg = self._kargs
        self._k_step_one(S, TB, cfg, 0, a)  # legal: checked above
        reward = float(self.engine.state["step_rewards"][0, self.learner_seat])
        reward += self._play_opponents()
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.terminated, False, self._info()

    # ------------------------------------------------------------------ render
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return self.game.render_rgb(self.engine, 0, viewer=self.learner_seat)
        text = self.game.render_text(self.engine, 0, viewer=self.learner_seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


def _as_action(action) -> int:
    """An action as a Python int: an integer, or a whole float (numpy scalars and 0-d or
    1-element arrays accepted); a bool, a string or any other value is not an action id
    (``True`` is not action 1, ``'12'`` not action 12)."""
    arr = np.asarray(action)
    if arr.size != 1:
        raise ValueError(f"expected one action, got {given(action)}")
    whole = np.issubdtype(arr.dtype, np.floating) and float(arr.reshape(-1)[0]).is_integer()
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or whole):
        raise ValueError(f"action must be an integer action id, got {given(action)}")
    return int(arr.reshape(-1)[0])
