"""The PettingZoo parallel env of any game of the zoo, built from its ``GameSpec``.

The games are turn-based: one seat decides at a time (PettingZoo's ``aec_to_parallel``
refuses them). ``parallel_env_class(spec)`` gives every seat an observation and asks
every seat for an action on every step; the seats that are not deciding have exactly one
legal action, **wait**, the last index of the action space (``num_actions``: the game's
own actions are ``0 .. num_actions - 1``, as in the AEC env). ``ripmarket_env.make(game,
parallel=True)`` and ``ripmarket_env.parallel_env(game)`` build it.

    >>> import ripmarket_env
    >>> env = ripmarket_env.parallel_env("black-market", num_players=4, mode="ffa")
    >>> obs, infos = env.reset(seed=0)
    >>> actions = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()}
    >>> obs, rewards, terminations, truncations, infos = env.step(actions)

Conventions (the same for every game):

* **Agents** ``player_0 .. player_{n-1}``, all in ``agents`` until the game ends; then
  ``agents`` is empty (every seat terminated on the last step; ``truncations`` always False).
* **Actions** ``Discrete(num_actions + 1)``. The deciding seat's action is applied (the
  engine takes the decisions whose one option is public itself); every other seat's action is
  ignored, whatever it is, so an idle seat can never change the game. A missing or
  illegal action of the deciding seat raises ``IllegalActionError`` (a ``ValueError``)
  and changes nothing (``illegal_action="terminate"``: the game ends, the offender gets
  ``illegal_reward``).
* **Masks** int8 0/1 of ``num_actions + 1``: the deciding seat's legal actions (wait
  illegal), every other seat ``[0, ..., 0, 1]`` (wait only), also after the game's end:
  a masked distribution is never empty.
* **Observations** (``obs_format``):
  ``"dict"`` (the default) ``{"observation": float32, "action_mask": int8}``, the AEC
  env's; ``"rllib"`` the same under RLlib's action-masking keys ``{"observations",
  "action_mask"}``; ``"box"`` the float32 observation alone (the mask is in the infos).
* **Infos** fixed numeric types only: ``phase_id`` (int, indexes ``spec.phase_names``,
  plus ``game_over``), the game's seat flag (bool, R.I.P. Market ``is_ghost``),
  ``acting`` (bool: this seat decides now) and, with ``obs_format="box"`` only, ``action_mask``
  (the mask above as a list of 0/1 ints, where and how AgileRL reads masks: its IPPO
  cannot take a numpy mask in the infos; TorchRL refuses a mask in both places).
* **Rewards** 0 until the step that ends the game, then every seat's final reward.
* ``reset(seed=s)`` deals the engine's game ``s`` (the AEC env's deal); ``state()`` is not
  offered (the full state is hidden information).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv

from ripmarket_env.core.spec import GameSpec
from ripmarket_env.envs.aec import aec_env_class

__all__ = ["OBS_FORMATS", "GameParallelEnv", "parallel_env_class"]

OBS_FORMATS = ("dict", "rllib", "box")

_CLASSES: dict[str, type] = {}


def parallel_env_class(spec: GameSpec) -> type:
    """The parallel env class of a game (one class per game, made once). Its name is
    PettingZoo's ``parallel_env``; pickle finds it again as ``ripmarket_env.parallel_env__<env
    name>`` (the package's ``__getattr__`` asks the registry)."""
    if spec.id not in _CLASSES:
        _CLASSES[spec.id] = type("parallel_env", (GameParallelEnv,), {
            "game": spec,
            "__doc__": f"{spec.title} as a PettingZoo parallel env (``ripmarket_env.envs.parallel``).",
            "metadata": {**GameParallelEnv.metadata, "name": spec.env_name},
            "__module__": "ripmarket_env", "__qualname__": f"parallel_env__{spec.env_name}",
        })
    return _CLASSES[spec.id]


class _SeatDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose unmasked ``sample()`` draws a legal action of its seat (so
    tools that step with ``action_space(agent).sample()`` play legal moves); with a mask it
    is Gymnasium's sampler. Compares equal to, and pickles as, a plain ``Discrete(n)``."""

    def __init__(self, n: int, legal_mask_fn):
        super().__init__(n)
        self._legal_mask_fn = legal_mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None:
            return super().sample(mask=self._legal_mask_fn())
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), int(self.start)))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


class GameParallelEnv(ParallelEnv, EzPickle):
    """A game of the zoo as a PettingZoo parallel env (see the module docstring);
    ``parallel_env_class(spec)`` binds it to a game."""

    game: GameSpec
    metadata = {"name": "game_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": True}

    def __init__(self, num_players: int | None = None, render_mode: str | None = None, rules=None, *,
                 obs_format: str = "dict", illegal_action: str = "raise", illegal_reward: float = -1.0,
                 **rules_kwargs):
        EzPickle.__init__(self, num_players, render_mode, rules, obs_format=obs_format,
                          illegal_action=illegal_action, illegal_reward=illegal_reward, **rules_kwargs)
        if obs_format not in OBS_FORMATS:
            raise ValueError(f"obs_format={obs_format!r} is not allowed; allowed: "
                             + ", ".join(repr(f) for f in OBS_FORMATS))
        self.obs_format = obs_format
        self.aec = aec_env_class(self.game)(num_players=num_players, render_mode=render_mode, rules=rules,
                                            illegal_action=illegal_action, illegal_reward=illegal_reward,
                                            **rules_kwargs)
        self.render_mode = render_mode
        self.rules = self.aec.rules
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        na = self.aec.engine.num_actions
        self.num_actions = na
        self.wait_action = na
        box = self.aec.observation_space(self.possible_agents[0])["observation"]
        mask_space = spaces.Box(low=0, high=1, shape=(na + 1,), dtype=np.int8)
        if obs_format == "box":
            obs_space = box
        else:
            obs_space = spaces.Dict({"observations" if obs_format == "rllib" else "observation": box,
                                     "action_mask": mask_space})
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: _SeatDiscrete(na + 1, self._mask_fn(a)) for a in self.possible_agents}
        self._wait = np.zeros(na + 1, np.int8)
        self._wait[na] = 1

    def _mask_fn(self, agent: str):
        return lambda: self._mask(agent)

    # ---------------------------------------------------------------- spaces
    def observation_space(self, agent):
        return self.aec.of_agent(self.observation_spaces, agent)

    def action_space(self, agent):
        return self.aec.of_agent(self.action_spaces, agent)

    # ---------------------------------------------------------------- views
    def _deciding(self) -> str | None:
        """The seat deciding now; None before the first ``reset`` and once the game is over
        (every seat's one legal action is then wait)."""
        aec = self.aec
        return None if aec.game_seed is None or all(aec.terminations.values()) else aec.agent_selection

    def _mask(self, agent: str) -> np.ndarray:
        if agent != self._deciding():
            return self._wait.copy()
        m = np.zeros(self.num_actions + 1, np.int8)
        m[: self.num_actions] = self.aec._mask
        return m

    def _observe(self) -> tuple[dict, dict]:
        aec = self.aec
        actor = self._deciding()
        obs, infos = {}, {}
        for agent in self.possible_agents:
            mask = self._mask(agent)
            o = aec.observe(agent)["observation"]
            if self.obs_format == "box":
                obs[agent] = o
            else:
                obs[agent] = {"observations" if self.obs_format == "rllib" else "observation": o,
                              "action_mask": mask}
            info = {k: v for k, v in aec.infos[agent].items() if k not in ("phase", "legal_moves")}
            info["acting"] = agent == actor
            if self.obs_format == "box":
                info["action_mask"] = mask.tolist()
            infos[agent] = info
        return obs, infos

    # ---------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: dict | None = None):
        self.aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        return self._observe()

    def step(self, actions: dict):
        if not self.agents:
            if self.aec.game_seed is None:  # no successful reset yet
                raise RuntimeError("reset() has not been called: call reset() before step()")
            raise RuntimeError("the game is over: call reset() before stepping again")
        aec = self.aec
        agent = aec.agent_selection
        if agent not in actions:
            raise ValueError(f"step needs the action of {agent}, the seat deciding now; got actions for "
                             f"{sorted(map(str, actions))}")
        action = _as_action(actions[agent])
        aec.step(action)  # raises on an illegal action (the wait included), state unchanged
        obs, infos = self._observe()
        done = all(aec.terminations.values())
        rewards = {a: float(aec.rewards[a]) if done else 0.0 for a in self.possible_agents}
        terminations = {a: done for a in self.possible_agents}
        truncations = {a: False for a in self.possible_agents}
        if done:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self):
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    @property
    def engine(self):
        """The one-game engine the env plays."""
        return self.aec.engine

    @property
    def game_seed(self) -> int | None:
        return self.aec.game_seed


def _as_action(action):
    """One action as a Python int (numpy and torch scalars, 0-d and one-element arrays),
    or the value itself when it is not a number (the AEC env refuses it with its message)."""
    try:
        arr = np.asarray(action)
    except Exception:  # noqa: BLE001
        return action
    if arr.size != 1 or not (np.issubdtype(arr.dtype, np.integer)
                             or (np.issubdtype(arr.dtype, np.floating) and float(arr.reshape(-1)[0]).is_integer())):
        return action
    return int(arr.reshape(-1)[0])
