"""RLlib's ``MultiAgentEnv`` face of any game of the zoo (new API stack), over the AEC env.

``multi_agent_env_class(spec)`` builds the class (ray is imported then, not when this
module is imported); ``ripmarket_env.rllib_env(game_id)`` is the same for a registered
game. It plugs into RLlib with no glue:

    >>> from ray.rllib.algorithms.ppo import PPOConfig
    >>> from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    >>> from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    >>> from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    >>> import ripmarket_env
    >>> config = (PPOConfig().environment(ripmarket_env.rllib_env(), env_config={"num_players": 4})
    ...           .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
    ...           .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
    ...               "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule)})))

How the game maps onto RLlib's multi-agent API:

* **Agents** are the seats ``player_0 .. player_{n-1}``; everyone stays in the game until
  it ends, Ghosts included (a dead player keeps deciding: pass, a Shadow card, a victim).
* **Turns.** ``reset`` and every ``step`` return an observation for exactly one agent,
  the one that decides next (a turn of several decisions is several steps of the same
  agent); ``step`` takes that agent's action. Decisions whose one legal option follows
  from public facts are taken by the engine and never reach an agent; one that only the
  agent's hand makes single reaches it with one action in the mask (``core.events``).
* **Observations** are ``{"observations": float32 (obs_size,), "action_mask": int8
  (num_actions,)}``: the keys RLlib's action-masking RLModule reads.
* **Rewards** are paid once, when the game ends (R-11): that step returns every seat's
  observation (its mask all ones: nothing is decided there), its final reward, and
  ``terminateds`` True for every agent and ``"__all__"``. RLlib credits a reward to the
  agent's last action, so each seat's final reward lands on its own last decision.
* **Actions**: ``Discrete(num_actions)``; ``action_space.sample()`` draws a legal action
  of the current decision (as the gym env's), so RLlib's env checker plays legal moves.
* **Infos** are the AEC env's, fixed types only (``phase_id``, the seat flag).

``env_config`` keys: ``num_players``, ``rules`` (a rules config or a dict of its fields),
``illegal_action`` (``"raise"``, the default, or ``"terminate"``: the offending agent gets
-1 and the game ends), ``render_mode`` (``"ansi"`` or ``"rgb_array"``); any other key is
a field of the game's rules config.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.spec import GameSpec

__all__ = ["multi_agent_env_class"]

_CLASSES: dict[str, type] = {}


def multi_agent_env_class(spec: GameSpec) -> type:
    """RLlib ``MultiAgentEnv`` class of a game (made once per game; imports ray)."""
    if spec.id in _CLASSES:
        return _CLASSES[spec.id]
    from gymnasium import spaces
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    from ripmarket_env.envs.aec import aec_env_class
    from ripmarket_env.envs.gym import LegalDiscrete, SampledAction

    class GameMultiAgentEnv(MultiAgentEnv):
        """A game of the zoo as an RLlib ``MultiAgentEnv`` (see ``ripmarket_env.envs.rllib``)."""

        game = spec
        metadata = {"render_modes": ["ansi", "rgb_array"]}

        def __init__(self, config: dict | None = None):
            super().__init__()
            cfg = dict(config or {})
            self.render_mode = cfg.pop("render_mode", None)
            self.aec = aec_env_class(spec)(
                num_players=cfg.pop("num_players", None), rules=cfg.pop("rules", None),
                illegal_action=cfg.pop("illegal_action", "raise"),
                render_mode=self.render_mode, **cfg,
            )
            self.agents = self.possible_agents = list(self.aec.possible_agents)
            inner = self.aec.observation_space(self.possible_agents[0])
            space = spaces.Dict({"observations": inner["observation"], "action_mask": inner["action_mask"]})
            n = self.aec.engine.num_actions
            self.observation_spaces = {a: space for a in self.possible_agents}
            # sample() draws a legal action of the current decision (RLlib's env checker
            # steps with action_space.sample()); the space compares equal to Discrete(n).
            self.action_spaces = {a: LegalDiscrete(n, self._legal) for a in self.possible_agents}
            self._ones = np.ones(n, np.int8)
            self._rng = np.random.default_rng()

        def _legal(self) -> np.ndarray:
            return self.aec.observe(self.aec.agent_selection)["action_mask"].astype(bool)

        def _obs(self, agent: str, final: bool = False) -> dict:
            o = self.aec.observe(agent)
            return {"observations": o["observation"], "action_mask": self._ones.copy() if final else o["action_mask"]}

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self.aec.reset(seed=int(self._rng.integers(0, 2**63 - 1)))
            agent = self.aec.agent_selection
            return {agent: self._obs(agent)}, {agent: dict(self.aec.infos[agent])}

        def step(self, action_dict: dict):
            agent = self.aec.agent_selection
            if agent not in action_dict:
                raise ValueError(f"step needs the action of {agent}, whose turn it is; got actions for {sorted(action_dict)}")
            action = action_dict[agent]
            if isinstance(action, SampledAction):  # drawn at another decision: redrawn here
                mask = self._legal()
                if not (0 <= int(action) < mask.size and mask[int(action)]):
                    action = action.redraw(mask)
            self.aec.step(int(action))
            aec = self.aec
            if all(aec.terminations.values()):  # the game is over: everyone's final reward
                obs = {a: self._obs(a, final=True) for a in self.possible_agents}
                rewards = {a: float(aec.rewards[a]) for a in self.possible_agents}
                terms = {a: True for a in self.possible_agents}
                terms["__all__"] = True
                truncs = {a: False for a in self.possible_agents}
                truncs["__all__"] = False
                return obs, rewards, terms, truncs, {a: dict(aec.infos[a]) for a in self.possible_agents}
            nxt = aec.agent_selection
            return ({nxt: self._obs(nxt)}, {nxt: 0.0}, {"__all__": False}, {"__all__": False},
                    {nxt: dict(aec.infos[nxt])})

        def render(self):
            return self.aec.render()

        def get_observation_space(self, agent_id):
            return self.observation_spaces[agent_id]

        def get_action_space(self, agent_id):
            return self.action_spaces[agent_id]

    GameMultiAgentEnv.__name__ = GameMultiAgentEnv.__qualname__ = "MultiAgentEnv"
    _CLASSES[spec.id] = GameMultiAgentEnv
    return GameMultiAgentEnv
