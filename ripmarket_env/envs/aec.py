# noqa: D212, D415
"""The PettingZoo AEC env of any game of the zoo, built from its ``GameSpec``.

``aec_env_class(spec)`` is the game's ``raw_env`` class (its docstring is the game's page,
``spec.doc``); ``wrapped(raw)`` puts PettingZoo's standard wrappers for classic games
around one. ``ripmarket_env.make(game_id)`` and ``ripmarket_env.env()`` build them.

Conventions, the same for every game: one agent per seat (``player_i``), every agent
stays in ``agents`` until the game ends, ``agent_selection`` is the engine's current
player, decisions whose one legal option follows from public facts are taken by the
engine (one that only a hand makes single is asked, ``core.events``), observations are
``{"observation": float32, "action_mask": int8}`` for ANY agent at any time (the mask all
zeros for agents not deciding), rewards are paid once on the step that ends the game,
``reset(seed=s)`` replays the engine's game ``s`` (``s`` any non-negative integer, R-12.4;
None draws a fresh one).

Infos hold fixed-type values only, so that generic trainers can batch them (Tianshou's
buffer, TorchRL's specs): ``infos[agent] = {"phase_id": int, <spec.seat_flag>: bool}``
(``phase_id`` indexes ``spec.phase_names``, plus ``"game_over"`` at the end when the game
has no such phase). ``verbose_infos=True`` adds the variable-length, text-valued entries:
``"phase"`` (the decision's name) and ``"legal_moves"`` (the deciding agent's legal
actions, ``[]`` for everyone else).

Illegal actions: ``illegal_action="raise"`` (the default of ``raw_env``) raises the
engine's ``IllegalActionError`` (state unchanged), for an integer that is not legal and for
a value that is not an integer action id at all (a bool, numpy bool, float, string or
None: ``True`` is not action 1; Python and numpy integers are action ids);
``illegal_action="terminate"`` ends the game there, the offending agent rewarded
``illegal_reward`` (-1) and every other 0, as PettingZoo's ``TerminateIllegalWrapper``
does (``env()`` wraps the raw env in it, so an illegal action terminates under ``env()``
either way; there a value outside the action space, a bool included, fails PettingZoo's
"action is not in action space" check first).

Calls without a game: ``step``, ``last`` and ``observe`` before the first ``reset`` raise
``RuntimeError`` ("call reset() first"); once the game is over and every agent has left
``agents``, ``step`` and ``last`` raise ``RuntimeError`` ("call reset() to start a new
game"; ``observe`` still shows any seat the final table). ``observe``, ``action_space`` and
``observation_space`` of an agent outside ``possible_agents`` raise ``UnknownAgentError``
(a ``KeyError`` and a ``ValueError``) naming the allowed agents. Under ``env()``,
PettingZoo's ``OrderEnforcingWrapper`` answers the calls before ``reset`` with its own
errors and a ``step`` after the game's end with its warning (nothing changes); ``last``
after the end raises the ``RuntimeError`` above.
"""

from __future__ import annotations

import copy
import operator
import secrets
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import order_enforcing

from ripmarket_env.core.engine import SEED_OR_NONE, IllegalActionError, action_id, check_seed, kernel_view as _k
from ripmarket_env.core.spec import GameSpec

__all__ = ["GameAECEnv", "UnknownAgentError", "aec_env_class", "check_illegal_action", "wrapped"]

ILLEGAL_ACTIONS = ("raise", "terminate")

#: The errors of calls that need a game: before the first ``reset``, and once the game is
#: over and every agent has left ``agents``.
NOT_RESET = "no game has been dealt yet: call reset() first"
GAME_OVER = "the game is over and every agent has left it (agents == []): call reset() to start a new game"


class UnknownAgentError(KeyError, ValueError):
    """An agent that is not one of the env's (``possible_agents``). A ``KeyError``, as the
    dictionary lookup it replaces, and a ``ValueError``; its message names the allowed agents."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def check_illegal_action(value: str) -> str:
    """``illegal_action``'s value, checked: ``"raise"`` or ``"terminate"``."""
    if value not in ILLEGAL_ACTIONS:
        raise ValueError(f"illegal_action={value!r} is not allowed; allowed: 'raise', 'terminate'")
    return value


def wrapped(e: AECEnv) -> AECEnv:
    """A raw env in PettingZoo's standard wrappers for classic games."""
    e = TerminateIllegalWrapper(e, illegal_reward=-1)
    e = AssertOutOfBoundsWrapper(e)
    e = OrderEnforcingWrapper(e)
    return e


_CLASSES: dict[str, type] = {}


def aec_env_class(spec: GameSpec) -> type:
    """The ``raw_env`` class of a game (one class per game, made once). Its name is
    PettingZoo's ``raw_env``; pickle finds it again as ``ripmarket_env.raw_env__<env
    name>`` (the package's ``__getattr__`` asks the registry)."""
    if spec.id not in _CLASSES:
        cls = type("raw_env", (GameAECEnv,), {
            "game": spec,
            "__doc__": spec.doc or f"{spec.title} as a PettingZoo AEC env.",
            "metadata": {**GameAECEnv.metadata, "name": spec.env_name},
            "__module__": "ripmarket_env", "__qualname__": f"raw_env__{spec.env_name}",
        })
        _CLASSES[spec.id] = cls
    return _CLASSES[spec.id]


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

    def step(self, action) -> None:
        # Gymnasium's Discrete.contains answers a bool as 0 / 1; no action id is a bool
        assert not isinstance(action, (bool, np.bool_)), "action is not in action space"
        super().step(action)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    __doc__ = wrappers.OrderEnforcingWrapper.__doc__

    def __init__(self, env):
        self._raw_env = env.unwrapped
        super().__init__(env)
        # ``wrapped``'s chain (order enforcing > out of bounds > terminate illegal > raw):
        # observe, step and last take the common case in one call (see ``_fused``).
        inner = getattr(env, "env", None)
        chain = (type(env) is AssertOutOfBoundsWrapper and type(inner) is TerminateIllegalWrapper
                 and inner.env is self._raw_env)
        self._illegal_wrapper = inner if chain else None

    # The three wrappers' checks, in one call where the chain is ``wrapped``'s and the step
    # is an ordinary one (the game has been reset, is not over, the agent is alive and the
    # action legal): the same checks in the same order, the same state changes
    # (TerminateIllegalWrapper's remembered observation included). Any other case runs
    # PettingZoo's own code down the chain.
    def observe(self, agent):
        ill = self._illegal_wrapper
        if ill is None or not self._has_reset:
            return super().observe(agent)
        raw = self._raw_env
        obs = raw.observe(agent)
        selected = raw.agent_selection
        if agent == selected:
            ill._prev_obs = obs
            infos = raw.infos
            ill._prev_info = infos[selected] if selected in infos else {}
        return obs

    def step(self, action) -> None:
        ill = self._illegal_wrapper
        raw = self._raw_env
        if ill is None or not self._has_reset or not raw.agents:
            return super().step(action)
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        prev = ill._prev_obs
        if dead or ill._terminated or type(prev) is not dict or action is None:
            return super().step(action)
        self._has_updated = True
        assert (not isinstance(action, (bool, np.bool_))  # AssertOutOfBoundsWrapper.step's rule
                and raw.action_space(agent).contains(action)), "action is not in action space"
        if not prev["action_mask"][action]:  # PettingZoo's illegal-move path
            return ill.step(action)
        ill._prev_obs = None
        ill._prev_info = None
        raw.step(action)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def last(self, observe: bool = True):
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's "cannot be accessed before reset"
        raw = self._raw_env
        if not raw.agents:
            raise RuntimeError(GAME_OVER)
        if self._illegal_wrapper is None:
            return super().last(observe)
        agent = raw.agent_selection
        assert agent is not None
        observation = self.observe(agent) if observe else None
        return (observation, raw._cumulative_rewards[agent], raw.terminations[agent],
                raw.truncations[agent], raw.infos[agent])


class _AgentIterable(order_enforcing.AECOrderEnforcingIterable):
    def __iter__(self):
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(order_enforcing.AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing agent iterator, reading ``agents`` and
    ``agent_selection`` straight from the raw env."""

    def __init__(self, env, max_iter: int):
        super().__init__(env, max_iter)
        self._raw = env._raw_env

    def __next__(self):
        raw = self._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        env = self.env
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


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
    directly, and whose ``sample(mask)`` takes an ordinary mask (an int8 array of shape
    ``(n,)`` of 0s and 1s, as ``observe`` gives it) in a few numpy calls: the same answers,
    the same draws from ``np_random`` and the same errors as ``Discrete``'s (whose checks
    cost some 25 us a sample, most of a random-play step). It compares equal to, and pickles
    and copies as, a plain ``Discrete(n)``."""

    def __init__(self, n: int):
        super().__init__(n)
        self._size = int(n)

    def contains(self, x) -> bool:
        if type(x) is int or type(x) is np.int64:
            return 0 <= x < self._size
        return super().contains(x)

    def sample(self, mask=None, probability=None):
        if (probability is None and type(mask) is np.ndarray and mask.dtype == np.int8
                and mask.shape == (self._size,)):
            legal = mask.nonzero()[0]
            # every non-zero entry a 1 (else Discrete's own check raises its error)
            if np.count_nonzero(mask == 1) == len(legal):
                if not len(legal):
                    return self.start
                # Generator.choice(a) of a 1-d array draws a[integers(0, len(a))]
                return self.start + self.dtype.type(legal[self.np_random.integers(0, len(legal))])
        return super().sample(mask, probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), int(self.start)))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


# ------------------------------------------------------------------------------ the env
class GameAECEnv(AECEnv, EzPickle):
    """A game of the zoo as a PettingZoo AEC env: one agent per seat (see the module
    docstring); ``aec_env_class(spec)`` binds it to a game."""

    game: GameSpec
    metadata = {
        "name": "game_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, num_players: int | None = None, render_mode: str | None = None,
                 rules=None, *, verbose_infos: bool = False, illegal_action: str = "raise",
                 illegal_reward: float = -1.0, **rules_kwargs):
        EzPickle.__init__(self, num_players, render_mode, rules, verbose_infos=verbose_infos,
                          illegal_action=illegal_action, illegal_reward=illegal_reward, **rules_kwargs)
        super().__init__()
        spec = self.game
        self.verbose_infos = bool(verbose_infos)
        self.illegal_action = check_illegal_action(illegal_action)
        self.illegal_reward = float(illegal_reward)
        rules = spec.make_rules(num_players, rules, **rules_kwargs)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; allowed: None, "
                + ", ".join(repr(m) for m in self.metadata["render_modes"])
            )
        self.render_mode = render_mode
        self.render_viewer: int | None = None
        self.render_god = False
        self.rules = rules
        self.engine = spec.make_engine(rules, 1)
        n = rules.num_players
        self.num_players = n
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        na = self.engine.num_actions
        low, high = spec.observation_bounds(self.engine)
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
    #: What ``_bind`` sets: views of the engine's arrays and its compiled entry points.
    _BOUND = ("_state_ref", "_S", "_TB", "_mask", "_step_rewards", "_na", "_obs_size", "_cfg", "_offs", "_no_mask",
              "_viewer", "_reset_one", "_step_one", "_status_one", "_observe_one", "_phase_names", "_over", "_flag",
              "_agent_bits")

    def __deepcopy__(self, memo):
        """``copy.deepcopy(env)``: the env as it stands, mid-game included (the engine
        cloned, the agents, rewards, infos and history copied), independent of this one:
        a search can copy an env, play on in the copy and leave the original where it was.
        Pickling, like PettingZoo's classic envs (``EzPickle``), still rebuilds a new env
        from the constructor's arguments."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k != "engine" and k not in self._BOUND:
                new.__dict__[k] = copy.deepcopy(v, memo)
        new.engine = self.engine.clone()
        new._bind()
        new._status = self._status  # the game's status as of the last step (``_bind`` sets a new env's)
        return new

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
        fast = self.game.fast
        self._reset_one = fast.reset_one

        def direct(fn, *sample):  # the drivers' entry points where they have them (core.drivers)
            return fn.direct(*sample) if hasattr(fn, "direct") else fn

        self._step_one = direct(fast.step_one, self._S, self._TB, self._cfg, 0, 0)
        self._status_one = direct(fast.status_one, self._S, self._cfg, 0)
        self._observe_one = direct(fast.observe_one, self._S, self._TB, self._cfg, self._viewer, self._offs,
                                   np.empty((1, self._obs_size), np.float32))
        names = tuple(self.game.phase_names)
        self._phase_names = names if "game_over" in names else names + ("game_over",)
        self._over = self._phase_names.index("game_over")
        self._flag = self.game.seat_flag
        self._status = (True, 0, self._over, 0)
        self._agent_bits = [(a, 1 << i) for i, a in enumerate(self.possible_agents)]

    # ---------------------------------------------------------------- spaces
    def observation_space(self, agent):
        return self.of_agent(self.observation_spaces, agent)

    def action_space(self, agent):
        return self.of_agent(self.action_spaces, agent)

    def of_agent(self, table: dict, agent):
        """``table[agent]`` for a per-agent table, or ``UnknownAgentError`` naming the allowed
        agents (the parallel env's spaces ask it too)."""
        try:
            return table[agent]
        except (KeyError, TypeError):
            raise UnknownAgentError(
                f"unknown agent {agent!r}; allowed: " + ", ".join(repr(a) for a in self.possible_agents)
            ) from None

    def _refuse_outside_game(self) -> None:
        """Raise ``RuntimeError`` when there is no game to play: before the first ``reset``
        (``NOT_RESET``) or once every agent has left ``agents`` (``GAME_OVER``)."""
        if self.game_seed is None:
            raise RuntimeError(NOT_RESET) from None
        if not self.agents:
            raise RuntimeError(GAME_OVER) from None

    # ---------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; ``seed`` fixes it, None draws a fresh one.

        A seed is any non-negative Python or numpy integer (R-12.4,
        ``core.engine.check_seed``); anything else (a negative integer, a bool, a float
        even if whole, a string, a sequence) raises ``ValueError: seed must be ...`` and
        leaves the env as it was.

        ``options`` go to the game's ``extras["reset_options"]`` hook when it has one (The
        Rune Market: ``{"first_player": seat}`` for match play); games without the hook
        accept and ignore them (API compatibility).
        """
        if seed is None:
            seed = secrets.randbits(63)
        seed = check_seed(seed, SEED_OR_NONE)  # before anything changes
        s64 = np.uint64(self.engine.fold_seed(seed))
        if self.engine.state is not self._state_ref:
            self._bind()
        hook = self.game.extras.get("reset_options") if options else None
        if hook is not None:
            self._status = hook(self.engine, 0, s64, options)  # validates before changing anything
        else:
            self._status = self._reset_one(self._S, self._TB, self._cfg, 0, s64)
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
        done, actor, phase, flags = self._status
        pid = self._over if done else phase
        flag = self._flag
        verbose = self.verbose_infos
        if rebuild:
            self.infos = {}
            for a, bit in self._agent_bits:
                info = self.infos[a] = {"phase_id": int(pid)}
                if flag:
                    info[flag] = bool(flags & bit)
                if verbose:
                    info["phase"] = self._phase_names[pid]
                    info["legal_moves"] = []
            self._infos_flags = flags
            self._infos_pid = int(pid)
        else:
            infos = self.infos
            pid = int(pid)
            if pid != self._infos_pid:  # most steps keep the phase: nothing to write
                for info in infos.values():
                    info["phase_id"] = pid
                self._infos_pid = pid
            if verbose:
                name = self._phase_names[pid]
                for info in infos.values():
                    info["phase"] = name
            if flags != self._infos_flags and flag:
                for a, bit in self._agent_bits:
                    infos[a][flag] = bool(flags & bit)
                self._infos_flags = flags
            if self._infos_legal is not None:
                infos[self._infos_legal]["legal_moves"] = []
        self._infos_legal = None
        if not done:
            agent = self.possible_agents[actor]
            if verbose:
                self.infos[agent]["legal_moves"] = self._mask.nonzero()[0].tolist()
                self._infos_legal = agent
            self.agent_selection = agent

    def refresh(self) -> None:
        """Re-read the engine after changing ``self.engine.state`` from outside the env."""
        self._bind()
        self._status = self._status_one(self._S, self._cfg, 0)
        self._sync(rebuild=True)

    # ---------------------------------------------------------------- step
    def _illegal(self, action) -> IllegalActionError:
        done, _actor, phase, _flags = self._status
        legal = [] if done else self._mask.nonzero()[0].tolist()
        return IllegalActionError(
            0, action, legal, self._phase_names[self._over if done else phase], self.engine.describe_action
        )

    def step(self, action) -> None:
        try:
            agent = self.agent_selection
            dead = self.terminations[agent] or self.truncations[agent]
        except (AttributeError, KeyError):  # no game: before reset, or every agent gone
            self._refuse_outside_game()
            raise
        if dead:
            self._was_dead_step(action)
            return
        # an action id is a Python or numpy integer; a bool, float, string or None is not
        a = action if type(action) is int else action_id(action)
        if a is None or not (0 <= a < self._na and self._mask[a]):
            if self.illegal_action == "terminate":
                self._terminate_illegal(agent)
                return
            raise self._illegal(action if a is None else a)
        self._cumulative_rewards[agent] = 0.0
        self._status = self._step_one(self._S, self._TB, self._cfg, 0, a)
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

    def _terminate_illegal(self, agent: str) -> None:
        """``illegal_action="terminate"``: the game ends here; ``agent`` gets ``illegal_reward``."""
        self._cumulative_rewards[agent] = 0.0
        for ag in self.possible_agents:
            self.rewards[ag] = self.illegal_reward if ag == agent else 0.0
            self.terminations[ag] = True
        self._accumulate_rewards()
        self._rewards_paid = True
        self._status = (True, self._status[1], self._over, self._status[3])
        self._sync()

    def last(self, observe: bool = True):
        try:
            return super().last(observe)
        except (AttributeError, KeyError):  # no game: before reset, or every agent gone
            self._refuse_outside_game()
            raise

    # ---------------------------------------------------------------- observe
    def observe(self, agent):
        try:
            seat = self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            seat = self.of_agent(self.agent_name_mapping, agent)  # raises, naming the allowed agents
        if self.game_seed is None:
            raise RuntimeError(NOT_RESET)
        obs = np.empty((1, self._obs_size), np.float32)
        self._viewer[0] = seat
        self._observe_one(self._S, self._TB, self._cfg, self._viewer, self._offs, obs)
        status = self._status
        mask = self._mask.copy() if status[1] == seat and not status[0] else self._no_mask.copy()
        return {"observation": obs[0], "action_mask": mask}

    # ---------------------------------------------------------------- render
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode "
                f'(e.g. ripmarket_env.make("{self.game.id}", render_mode="ansi")).'
            )
            return None
        if self.render_mode == "rgb_array":
            return self.game.render_rgb(self.engine, 0, viewer=self.render_viewer, god=self.render_god)
        text = self.game.render_text(self.engine, 0, viewer=self.render_viewer, god=self.render_god)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass

    # ---------------------------------------------------------------- records
    def save_record(self, path) -> Path:
        """Write the current game (from its seed, every action so far) as a record file."""
        from ripmarket_env.envs.record import Recorder

        if self.game_seed is None:
            raise RuntimeError("no game to save: call reset() first")
        rec = Recorder.new(self.rules, self.game_seed, cards=getattr(self.engine, "cards", None), spec=self.game)
        for a in self._history:
            rec.step(a)
        return rec.save(path)
