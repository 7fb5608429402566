"""The shared steps of the determinized Monte-Carlo search agents (``bm-search``,
``rm-search``): a decision with one legal action is taken at once; otherwise the game is
rebuilt from the observation ``budget / |legal|`` times (at least ``min_samples``), every
legal action is applied to the same determinized copies, each copy is played out by the
game's compiled rollouts, and the action with the best mean final reward is chosen."""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view

from agents.base import BaseAgent


def best_by_rollouts(base, legal: np.ndarray, rollouts, rng: np.random.Generator, eps: float,
                     max_steps: int) -> tuple[int, dict]:
    """``base``: an engine whose rows are the determinized copies (viewer = seat 0, legal
    actions computed); ``rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out)`` the
    game's compiled rollout loop. The chosen action and the search's summary (``actions``,
    mean ``values``, ``simulations`` per action); ties are broken at random by ``rng``."""
    per = base.batch_size
    eng = type(base)(base.rules, per * legal.size, cards=base.cards)
    eng.state[:] = np.repeat(base.state, legal.size)
    first = np.tile(legal, per).astype(np.int64)
    seeds = rng.integers(1 << 62, size=len(first)).astype(np.uint64)
    out = np.zeros(len(first), np.float32)
    rollouts(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, first, 0, seeds, eps, max_steps, out)
    means = out.reshape(per, legal.size).mean(axis=0)
    pick = int(legal[int(np.argmax(means + rng.random(legal.size) * 1e-6))])
    return pick, {"actions": legal.tolist(), "values": means.tolist(), "simulations": per}


class DeterminizedSearch(BaseAgent):
    """The ``act`` of a determinized search agent. A game's subclass sets ``budget``, ``eps``,
    ``rng`` and ``last`` and gives ``min_samples`` (copies per action at the least),
    ``steps_per_turn`` (the rollouts' step cap is ``rules.turns_cap`` times it),
    ``no_legal`` (the error for an empty mask), ``_rules(obs)``,
    ``_reconstruct(obs, rules, n, rng)`` and ``_rollouts`` (the compiled rollout loop), and may
    override ``_disagrees`` (what to do when the rebuilt game's legal actions differ from
    the observed mask)."""

    min_samples = 2
    steps_per_turn = 1
    no_legal = "no legal action in the mask"

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def _disagrees(self, base, rules, observation, action_mask) -> int | None:
        """None if ``base``'s legal actions are the observed ones; else the action to play
        (or raise)."""
        return None

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(np.asarray(action_mask).astype(bool))
        if legal.size == 0:
            raise ValueError(self.no_legal)
        if legal.size == 1:
            return int(legal[0])
        obs = np.asarray(observation, dtype=np.float32)
        rules = self._rules(obs)
        per = max(self.min_samples, self.budget // legal.size)
        base = self._reconstruct(obs, rules, per, self.rng)
        other = self._disagrees(base, rules, observation, action_mask)
        if other is not None:
            return other
        action, self.last = best_by_rollouts(base, legal, self._rollouts, self.rng, self.eps,
                                             rules.turns_cap * self.steps_per_turn)
        return action
