"""RipMarket-v0: the single-agent Gymnasium face of R.I.P. Market.

A learner sits in one seat; every other seat is played by an opponent agent (the
``agents`` protocol). The learner decides in every phase of the game, as a living player
(acquire, play, choose a target or Market slot, choose a replacement) and as a Ghost
(pass or play a Shadow card, choose its victim). ``step(action)`` applies the learner's
action, then lets the opponents act until the learner must decide again or the game ends.

    >>> import gymnasium as gym
    >>> import ripmarket_env.gym_env  # registers RipMarket-v0
    >>> env = gym.make("RipMarket-v0", num_players=4, learner_seat="random")
    >>> obs, info = env.reset(seed=0)
    >>> mask = info["action_mask"]            # or env.unwrapped.action_masks()
    >>> obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))

Specs
    ================== ====================================================================
    Action space       ``Discrete(num_actions)``: the engine's flat action table
                       (``ripmarket_env.engine.actions``, ``docs/ENV.md``);
                       ``action_space.sample()`` draws a legal action (``LegalDiscrete``)
    Observation space  ``Box(float32, (obs_size,))``: the engine observation seen from the
                       learner's seat (``ripmarket_env.engine.observation``); bounds per
                       piece, see ``observation_space_for``
    Action mask        ``env.action_masks()`` (sb3-contrib MaskablePPO convention) and
                       ``info["action_mask"]``: bool, ``(num_actions,)``
    Reward             0 on every step but the last; at termination the learner's final
                       reward (R-11: ``reward_mode`` "win" or "placement")
    Termination        the game ends (R-9); ``truncated`` is always False (the engine's
                       ``max_rounds`` safety cap ends every game)
    ================== ====================================================================

Opponents
    ``opponents`` is one agent (shared by every other seat) or a list of ``num_players - 1``
    agents; an agent is an object with ``act(obs, mask)`` / ``act_batch(obs, masks)`` or a
    registry name for ``agents.make``. ``opponents[k]`` plays the seat ``k + 1`` seats
    clockwise from the learner. Every opponent sees only its own seat's observation and
    mask. On every ``reset`` an opponent with a ``reset(seed=...)`` method is reseeded from
    the env's random generator, so ``reset(seed=s)`` replays the same episode for the same
    learner actions. Default: random agents. When every opponent is the uniformly random
    agent (``agents.base.RandomAgent``), the opponents' moves run inside one compiled call
    (``engine/vector_kernels.py``), each a uniformly random legal action from a stream the
    env's generator seeds at every reset; ``compiled_opponents=False`` keeps them in Python.

Seeding
    ``reset(seed=s)`` deals the game ``Engine.reset([s])`` deals; ``reset()`` draws the next
    game seed from the env's generator (``np_random``). With ``learner_seat="random"`` the
    seat is drawn from that generator too.

Illegal actions
    An action outside the learner's legal set raises
    ``ripmarket_env.engine.IllegalActionError`` (a ``ValueError``) naming the action and the
    legal actions; the game is left unchanged and the env can keep stepping. Stepping a
    finished game without ``reset`` raises ``RuntimeError``. The one exception is an action
    drawn by ``action_space.sample()`` (a ``SampledAction``, "a random legal action"): used
    at a later decision than the one it was drawn at, it is redrawn among that decision's
    legal actions.

The mask after termination is all True (nothing is decided there; this keeps masked
policies well defined when a caller evaluates them on a terminal observation).

Rendering
    ``render_mode="ansi"`` returns and ``"human"`` prints ``ripmarket_env.render.render_text``
    of the game seen from the learner's seat, when that module is present.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .engine import Engine, IllegalActionError, RulesConfig
from .engine import kernels as K
from .engine import vector_kernels as VK
from .engine.core import _k
from .engine.observation import encode_serial, observation_bounds
from .engine.state import PHASE_NAMES

ENV_ID = "RipMarket-v0"
MAX_SEED = 2**63 - 1
# A game in which the learner never faces a real choice (R-12.1: every one of its
# decisions forced) ends inside reset; reset then deals the next game, at most this often.
_MAX_REDEALS = 100


# ---------------------------------------------------------------------------------------
# Pieces shared with the vector env
# ---------------------------------------------------------------------------------------
def make_rules(num_players: int | None = None, rules: RulesConfig | dict | None = None) -> RulesConfig:
    """The RulesConfig from ``rules`` (a RulesConfig or a dict of its fields) and/or ``num_players``."""
    if rules is None:
        return RulesConfig(num_players=4 if num_players is None else num_players)
    if isinstance(rules, dict):
        rules = RulesConfig.from_dict(rules)
    if not isinstance(rules, RulesConfig):
        raise TypeError(f"rules must be a RulesConfig or a dict of its fields, got {type(rules).__name__}")
    if num_players is not None and num_players != rules.num_players:
        raise ValueError(
            f"num_players={num_players} contradicts rules.num_players={rules.num_players}; give one of them"
        )
    return rules


def resolve_opponents(opponents, num_players: int) -> tuple[list, bool]:
    """(agents, shared): one agent for every other seat, or ``num_players - 1`` agents.

    Agents given by name are built with ``agents.make(name)``.
    """
    import agents as agent_zoo

    def build(a):
        if isinstance(a, str):
            return agent_zoo.make(a)
        if not (callable(getattr(a, "act", None)) and callable(getattr(a, "act_batch", None))):
            raise TypeError(
                f"an opponent must be an agent name ({', '.join(agent_zoo.names())}) or an object "
                f"with act(obs, mask) and act_batch(obs, masks), got {type(a).__name__}"
            )
        return a

    if opponents is None:
        opponents = "random"
    if isinstance(opponents, str) or not isinstance(opponents, Sequence):
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


def observation_space_for(engine: Engine) -> spaces.Box:
    """The float32 Box of one observation, with bounds per piece of the layout
    (``ripmarket_env.engine.observation.piece_bounds``)."""
    low, high = observation_bounds(engine.cards)
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


def _render_fn():
    """``ripmarket_env.render.render_text`` if that module exists, else None."""
    try:
        from .render import render_text
    except ImportError:
        return None
    return render_text


def call_render_text(fn, engine: Engine, game: int, seat: int) -> str:
    """``render_text(engine, g, viewer=seat)``: game ``g`` seen from the learner's seat."""
    return fn(engine, game, viewer=seat)


# ---------------------------------------------------------------------------------------
# The env
# ---------------------------------------------------------------------------------------
class RipMarketEnv(gymnasium.Env):
    """One learner seat against opponent agents; see the module docstring.

    Args:
        num_players: 2-10 players (or give ``rules``).
        opponents: one agent or name for every other seat, or one per other seat
            (``opponents[k]`` sits ``k + 1`` seats clockwise from the learner); default
            ``"random"``.
        learner_seat: a seat ``0..num_players-1``, or ``"random"`` (drawn each episode).
        rules: a ``RulesConfig`` (or a dict of its fields) for rule variants.
        render_mode: None, ``"ansi"`` or ``"human"``.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1, "name": "ripmarket"}

    def __init__(
        self,
        num_players: int | None = None,
        opponents=None,
        learner_seat: int | str = 0,
        rules: RulesConfig | dict | None = None,
        render_mode: str | None = None,
        compiled_opponents: bool = True,
    ):
        super().__init__()
        self.rules = make_rules(num_players, rules)
        self.num_players = self.rules.num_players
        self.engine = Engine(self.rules, batch_size=1)
        self.opponents, self._shared = resolve_opponents(opponents, self.num_players)
        self._learner_seat_arg = check_learner_seat(learner_seat, self.num_players)
        # Render modes exist only when the text renderer is present.
        self.metadata = {**self.metadata, "render_modes": ["ansi", "human"] if _render_fn() else []}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            if _render_fn() is None:
                raise ValueError(
                    f"render_mode={render_mode!r} needs ripmarket_env.render.render_text, which is not available"
                )
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.action_space = LegalDiscrete(self.engine.num_actions, self.action_masks)
        self.observation_space = observation_space_for(self.engine)
        self.learner_seat = 0 if self._learner_seat_arg == "random" else self._learner_seat_arg
        self.game_seed: int | None = None
        self._act = np.full(1, -1, np.int64)
        self._viewer = np.zeros(1, np.int64)
        self._obs = np.empty((1, self.engine.obs_size), np.float32)
        self._started = False
        self.compiled_opponents = bool(compiled_opponents)
        self._opp_rng = np.zeros(1, np.uint64)  # the compiled random opponents' stream
        from agents.base import RandomAgent

        self._random_agent = RandomAgent
        self._bind()

    def _bind(self) -> None:
        eng = self.engine
        self._kargs = (_k(eng.state), _k(eng.tables), eng.cfg)

    # ------------------------------------------------------------------ queries
    @property
    def terminated(self) -> bool:
        return bool(self.engine.terminated[0])

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, bool ``(num_actions,)`` (all True once the game is over)."""
        if not self._started or self.terminated:
            return np.ones(self.engine.num_actions, dtype=bool)
        return self.engine.legal_mask()[0].copy()

    def _observation(self) -> np.ndarray:
        self._viewer[0] = self.learner_seat
        S, TB, cfg = self._kargs
        encode_serial(S, TB, cfg, self._viewer, self.engine._offs, self._obs)
        return self._obs[0].copy()

    def _random_opponents(self) -> bool:
        """Every opponent is the uniformly random agent: they play inside one compiled call."""
        return self.compiled_opponents and all(type(a) is self._random_agent for a in self.opponents)

    def _info(self) -> dict[str, Any]:
        phase = "game_over" if self.terminated else PHASE_NAMES[self.engine.state["phase"][0]]
        return {
            "action_mask": self.action_masks(),
            "learner_seat": self.learner_seat,
            "phase": phase,
            "game_seed": self.game_seed,
        }

    # ------------------------------------------------------------------ play
    def _play_opponents(self) -> float:
        """Opponents act until the learner decides or the game ends; the learner's reward."""
        eng = self.engine
        if self._random_opponents():
            S, TB, cfg = self._kargs
            return float(VK.random_opponents_one(S, TB, cfg, 0, self.learner_seat, self._opp_rng))
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
        a = _as_action(action)
        mask = self.engine.legal_mask()[0]
        if isinstance(action, SampledAction) and not (0 <= a < mask.shape[0] and mask[a]):
            a = action.redraw(mask)
        if not (0 <= a < mask.shape[0] and mask[a]):
            raise IllegalActionError(
                0, a, self.engine.legal_actions(0), PHASE_NAMES[self.engine.state["phase"][0]],
                self.engine.describe_action,
            )
        S, TB, cfg = self._kargs
        K.step_one(S, TB, cfg, 0, a)  # legal: checked above
        reward = float(self.engine.state["step_rewards"][0, self.learner_seat])
        reward += self._play_opponents()
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.terminated, False, self._info()

    # ------------------------------------------------------------------ render
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = call_render_text(_render_fn(), self.engine, 0, self.learner_seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


def _as_action(action) -> int:
    """An action as a Python int (numpy scalars and 0-d/1-element arrays accepted)."""
    arr = np.asarray(action)
    if arr.size != 1:
        raise ValueError(f"expected one action, got {action!r}")
    if not np.issubdtype(arr.dtype, np.integer) and not float(arr.reshape(-1)[0]).is_integer():
        raise ValueError(f"actions are integers, got {action!r}")
    return int(arr.reshape(-1)[0])


def _register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="ripmarket_env.gym_env:RipMarketEnv",
            vector_entry_point="ripmarket_env.vector_env:RipMarketGymVectorEnv",
            nondeterministic=False,
        )


_register()
