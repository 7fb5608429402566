"""Batched learner envs of any game of the zoo: N games in ONE engine batch, a learner
seat in each (R.I.P. Market's: ``ripmarket_env.vector_env.RipMarketVecEnv``).

Two faces over the same batch (``LearnerBatch``), bound to a game by
``vec_env_classes(spec)``:

* ``GameVecEnv`` — a Stable-Baselines3 ``VecEnv`` (works with sb3-contrib
  MaskablePPO: ``env_method("action_masks")`` returns the learner's masks).
* ``GameGymVectorEnv`` — a Gymnasium ``VectorEnv`` (also
  ``gymnasium.make_vec("RipMarket-v0", num_envs=N)`` after ``import ripmarket_env``).

    >>> from ripmarket_env.vector_env import RipMarketVecEnv
    >>> venv = RipMarketVecEnv(num_envs=1024, num_players=4, learner_seat="random", seed=0)
    >>> obs = venv.reset()                                  # (1024, obs_size) float32
    >>> masks = venv.action_masks()                         # (1024, num_actions) int8 0/1
    >>> obs, rewards, dones, infos = venv.step(actions)     # one learner action per game

Each game follows the single-agent rules of ``GameEnv`` (``envs/gym.py``): the learner
decides in every phase, Living and Ghost; after the learner's action the opponents act
until the learner must decide again or the game ends. The opponents of all games act
together: each round of the loop gathers every game where an opponent must decide,
encodes those seats' observations and masks, calls ``act_batch`` once per opponent
agent, and steps the engine once. Rewards are 0 except at the end of a game (R-11).
The observations and masks handed to ``act_batch`` are views of preallocated buffers,
valid during the call (an agent that keeps them must copy them).

Random opponents, compiled: when every opponent is the uniformly random agent
(``ripmarket_env.core.agent.RandomAgent``, the default) a whole ``step`` is one compiled
call (the game's batch kernels, ``GameSpec.batch``): per game, the learner's action, the opponents' moves up to
the learner's next decision, the auto-reset of a finished game and the learner's new
observation and mask. Each opponent move is a uniformly random legal action drawn from
the game's own stream, started at every deal from the base seed, the game and the
episode, so the seeding rules below hold unchanged (the draws differ from
``RandomAgent``'s own generator). ``compiled_opponents=False`` keeps the Python loop;
``batch.compiled_opponents`` tells which path runs. A subclass that overrides
``_play_opponents``, ``_opponent_actions`` or ``_deal`` always gets the Python loop.

Auto-reset (both faces): a game that ends is dealt again inside the same ``step``; the
returned observation and mask are the new game's first learner decision.
SB3 face: ``dones[i]`` is True and ``infos[i]["terminal_observation"]`` holds the last
observation of the finished game (SB3's convention). Gymnasium face:
``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``): ``terminations[i]`` is True,
``infos["final_obs"][i]`` is the finished game's last observation (``infos["_final_obs"]``
marks those games) and ``infos["final_info"]["reward"]`` the finished games' final
rewards. ``truncations`` are always False.

Seeding: a base seed gives every game its own stream of deals: episode ``j`` of game
``i`` is dealt with ``episode_seed(base, i, j)`` (a 63-bit seed; ``Engine.reset([s])``
deals the same game), whatever the other games do. ``learner_seat="random"`` draws each
episode's seat from the same hash. Every ``reset`` starts the streams over (episode 0) and
reseeds the opponent agents that have ``reset(seed=...)`` from the base seed. Same base
seed + same learner actions = the same trajectories. Without a seed the base is drawn
from the OS.

Buffers: observations are written in place into a ring of ``obs_buffers`` preallocated
arrays (default 2): the array ``step`` returns stays valid until the step after next,
which is what SB3's rollout collection needs (it stores the previous observation after
the next step). Copy it if you keep it longer. Rewards and dones are fresh arrays.

Masks: ``action_masks()``, ``env_method("action_masks")`` and ``info["action_mask"]`` are
int8 0/1 (as the AEC and gym envs'); ``batch.masks`` holds the same as bool.

Illegal learner actions (as the AEC and gym envs): ``illegal_action="raise"`` (the default)
raises ``ripmarket_env.engine.IllegalActionError`` (a ValueError) naming the game, the
action and its legal actions; nothing is stepped, no game of the batch changes, and the
env can keep stepping. ``illegal_action="terminate"`` (for algorithms without action
masking): each game whose action is outside its learner's legal set (an out-of-range
integer too) ends there, not stepped: its reward is ``illegal_reward`` (-1 by default),
its done flag is set, its terminal observation is the learner's last observation (the one
the illegal action answered), and it is dealt again as any finished game; the other games
step as usual. ``batch.illegal`` holds the games forfeited by the last step; the SB3 face
sets ``infos[i]["illegal_action"] = True`` for them, the Gymnasium face's
``info["illegal_action"]`` is a ``(num_envs,)`` bool array. A batch of actions has shape
``(num_envs,)``, one integer per game; a malformed batch (any other shape, non-integer
actions) raises ``ValueError`` in both modes and changes nothing. ``num_envs`` is a
positive integer (anything else, a bool or a float included, raises ``ValueError``).

Threads: ``numba_threads=1`` (the default) runs serial kernels; any other value runs
the parallel ones (the compiled path: one ``prange`` over the games) on at most that many
threads (None: numba's default, every core). One thread is the default: with other
opponents a step is many small kernel calls (one per round of opponent moves), where
waking a thread pool costs more than it saves, and when other processes keep the cores
busy numba's pool slows the env down (measured: 4-player games, 1024 per batch, 25k vs
1.2k learner steps/s wall on a loaded 2-core machine; the compiled path at 6 players
halves, see ``docs/ARCHITECTURE.md``, Speed). On idle cores the compiled path gains from
threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
import numba
from numba import njit

from ripmarket_env.core import seeds as CS
from ripmarket_env.core.agent import RandomAgent, act_each
from ripmarket_env.core.engine import Engine, IllegalActionError, given, kernel_view as _k
from ripmarket_env.core.spec import GameSpec
from ripmarket_env.envs.aec import check_illegal_action
from ripmarket_env.envs.gym import check_learner_seat, observation_space_for, reseed_agents, resolve_opponents

_M64 = (1 << 64) - 1


# ---------------------------------------------------------------------------------------
# Seeds (compiled in ripmarket_env/core/seeds.py)
# ---------------------------------------------------------------------------------------
def episode_seed(base: int, games, episodes, salt: int = 0) -> np.ndarray:
    """The 63-bit deal seed of episode ``episodes`` of game ``games`` under ``base`` (uint64 array)."""
    g = np.ascontiguousarray(games, dtype=np.int64).reshape(-1)
    j = np.ascontiguousarray(episodes, dtype=np.int64).reshape(-1)
    if g.shape != j.shape:
        raise ValueError("episode_seed needs one episode number per game")
    out = np.empty(g.shape, np.uint64)
    CS.episode_seeds(np.uint64(int(base) & _M64), np.uint64(int(salt) & _M64), g, j, out)
    return out


def seeds_to_u64(seeds) -> np.ndarray:
    """``seed_to_u64`` for many non-negative seeds below 2**64 at once (uint64 result)."""
    a = np.asarray(seeds)
    if a.dtype.kind not in "ui" or (a.size and a.dtype.kind == "i" and int(a.min()) < 0):
        raise ValueError("seeds_to_u64 takes non-negative integer seeds below 2**64")
    s = np.ascontiguousarray(a, dtype=np.uint64).reshape(-1)
    out = np.empty(s.shape, np.uint64)
    CS.fold_seeds_u64(s, out)
    return out


# ---------------------------------------------------------------------------------------
# Per-round bookkeeping of the opponent loop, compiled (reads the public face of the state:
# actor, done, mask, step_rewards; the rules stay in the engine's kernels)
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _waiting(S, rows, seat, out):
    """Write into ``out`` the rows (of ``rows``) whose game waits for an opponent; return how many."""
    n = 0
    for i in range(rows.shape[0]):
        g = rows[i]
        r = S[g]
        if not r.done and r.actor != seat[g]:
            out[n] = g
            n += 1
    return n


@njit(cache=True, nogil=True)
def _first_illegal_choice(masks, chosen):
    """Index of the first row whose chosen action is not in its mask, or -1."""
    A = masks.shape[1]
    for i in range(chosen.shape[0]):
        a = chosen[i]
        if a < 0 or a >= A or not masks[i, a]:
            return i
    return -1


@njit(cache=True, nogil=True)
def _after_step(S, rows, seat, acc, use_acc, out):
    """After the engine stepped ``rows``: add the learner's step reward to ``acc`` and
    write the rows that still wait for an opponent into ``out``; return how many."""
    n = 0
    for i in range(rows.shape[0]):
        g = rows[i]
        r = S[g]
        if use_acc:
            acc[g] += r.step_rewards[seat[g]]
        if not r.done and r.actor != seat[g]:
            out[n] = g
            n += 1
    return n


# ---------------------------------------------------------------------------------------
# The batch
# ---------------------------------------------------------------------------------------
class NumbaThreads:
    """Context manager: the engine's parallel kernels run on at most ``n`` threads inside
    the block (numba's thread count is per calling thread; restored on exit). ``None``
    leaves numba's setting alone."""

    def __init__(self, n: int | None):
        self.n = n
        self._prev = None

    def __enter__(self):
        if self.n is not None:
            self._prev = numba.get_num_threads()
            numba.set_num_threads(max(1, min(int(self.n), numba.config.NUMBA_NUM_THREADS)))
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            numba.set_num_threads(self._prev)
            self._prev = None
        return False


class LearnerBatch:
    """N games in one engine batch, one learner seat per game, opponents acting in batch.

    The shared core of ``RipMarketVecEnv`` and ``RipMarketGymVectorEnv``: ``reset`` and
    ``step`` fill ``obs`` (ring buffer), ``masks``, and return rewards, dones and the
    terminal observations of the games that ended.
    """

    sparse_opponents = False
    """True: each round of the opponent loop also gives the deciders' observations as CSR,
    ``opp_csr = (cols, vals, starts)`` (``None`` if a round had too many non-zeros), read
    in the same compiled pass that encodes them; for network opponents whose first layer
    takes only the non-zeros (a subclass passes it on in ``_opponent_actions``)."""

    def __init__(
        self,
        num_envs: int,
        num_players: int | None = None,
        opponents=None,
        learner_seat: int | str | Sequence[int] = 0,
        rules=None,
        seed: int | None = None,
        numba_threads: int | None = 1,
        obs_buffers: int = 2,
        compiled_opponents: bool = True,
        *,
        spec: GameSpec,
        agent_resolver=None,
        decide=None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        **rules_kwargs,
    ):
        """``spec``: the game; ``agent_resolver(name)`` builds opponents given by name;
        ``decide(agents, who, obs, masks)`` decides rows for several agents at once (default
        ``core.agent.act_each``: one ``act_batch`` per agent; the zoo's
        ``agents.act_grouped`` fuses network agents); ``illegal_action``: ``"raise"`` or
        ``"terminate"`` (module docstring), ``illegal_reward`` the forfeiting game's reward;
        ``rules_kwargs``: rule fields as keywords (instead of ``rules``)."""
        check_num_envs(num_envs)
        self.illegal_action = check_illegal_action(illegal_action)
        self.illegal_reward = float(illegal_reward)
        self.illegal = np.zeros(0, np.int64)  # the games the last step forfeited (terminate mode)
        self.game = spec
        self.decide = decide if decide is not None else act_each
        self.num_envs = B = int(num_envs)
        self.rules = spec.make_rules(num_players, rules, **rules_kwargs)
        self.num_players = P = self.rules.num_players
        self.engine = spec.make_engine(self.rules, B)
        self.opponents, self.shared_opponent = resolve_opponents(opponents, P, agent_resolver)
        if isinstance(learner_seat, (str, int, np.integer)) and not isinstance(learner_seat, bool):
            self.learner_seat_mode = check_learner_seat(learner_seat, P)
            fixed = 0 if self.learner_seat_mode == "random" else self.learner_seat_mode
            self.seat = np.full(B, fixed, dtype=np.int64)
        else:
            seats = [check_learner_seat(int(s), P) for s in learner_seat]
            if len(seats) != B:
                raise ValueError(f"learner_seat: give one seat per game ({B}), got {len(seats)}")
            self.learner_seat_mode = "per_game"
            self.seat = np.array(seats, dtype=np.int64)
        self.observation_space = observation_space_for(spec, self.engine)
        self.num_actions = self.engine.num_actions
        self.obs_size = self.engine.obs_size
        # One thread: the engine's serial kernels (no thread pool at all); otherwise its
        # parallel kernels, on at most ``numba_threads`` threads (None: numba's default).
        self.threads = NumbaThreads(None if numba_threads == 1 else numba_threads)
        serial = numba_threads == 1
        kb = spec.batch
        self._kb = kb
        self._phase_names = spec.phase_names
        self._k_step = kb.step_serial if serial else kb.step_batch
        self._k_step_rows = kb.step_rows if serial else kb.step_rows_parallel
        self._k_reset = kb.reset_serial if serial else kb.reset_batch
        self._k_encode = kb.encode_serial if serial else kb.encode_batch
        self.compiled_opponents = bool(compiled_opponents) and self._all_random_opponents()
        self._k_fast_step = kb.learner_step_serial if serial else kb.learner_step_parallel
        self._k_fast_reset = kb.learner_reset_serial if serial else kb.learner_reset_parallel
        # Buffers, allocated once.
        if int(obs_buffers) < 1:
            raise ValueError("obs_buffers must be at least 1")
        self._obs_ring = [np.zeros((B, self.obs_size), np.float32) for _ in range(int(obs_buffers))]
        self._ring_i = 0
        self.obs = self._obs_ring[0]
        self.masks = np.zeros((B, self.num_actions), dtype=bool)
        self.rewards = np.zeros(B, np.float32)
        self.dones = np.zeros(B, dtype=bool)
        self._opp_obs = np.zeros((B, self.obs_size), np.float32)
        self._opp_masks = np.zeros((B, self.num_actions), dtype=bool)
        self._opp_viewers = np.zeros(B, np.int64)
        self._opp_cols = self._opp_vals = self._opp_starts = None  # sparse_opponents' buffers, made on first use
        self.opp_csr = None
        self._rows_a = np.zeros(B, np.int64)
        self._rows_b = np.zeros(B, np.int64)
        self._arange = np.arange(B)
        self._terminal = np.zeros((B, self.obs_size), np.float32)  # compiled path: last observations
        self._game_seeds = np.zeros(B, np.int64)  # compiled path: each game's deal seed
        self._opp_rng = np.zeros(B, np.uint64)  # compiled path: each game's opponent stream
        self.episode = np.zeros(B, np.int64)  # episodes dealt per game (the next one's index)
        self.base_seed = self._fresh_base() if seed is None else int(seed)
        self._started = False
        # Views into the engine's state (fields of the structured array, no copies).
        st = self.engine.state
        self._done = st["done"]
        self._step_rewards = st["step_rewards"]
        self._mask_view = self.engine.legal_mask()

    def _all_random_opponents(self) -> bool:
        """True when every opponent is the uniformly random agent and this class plays
        opponents and deals as LearnerBatch does (a subclass may change either)."""
        cls = type(self)
        return (
            all(type(a) is RandomAgent for a in self.opponents)
            and cls._play_opponents is LearnerBatch._play_opponents
            and cls._opponent_actions is LearnerBatch._opponent_actions
            and cls._deal is LearnerBatch._deal
        )

    def _fast_args(self):
        eng = self.engine
        random_seats = self.num_players if self.learner_seat_mode == "random" else 0
        return (np.uint64(self.base_seed & _M64), random_seats, self.seat,
                self.episode, self._game_seeds, self._opp_rng, eng._offs)

    @staticmethod
    def _fresh_base() -> int:
        return int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))

    # ------------------------------------------------------------------ dealing
    def _deal(self, games: np.ndarray) -> None:
        """Start the next episode of each game in ``games`` (seed stream of the base seed)."""
        ep = self.episode[games]
        seeds = episode_seed(self.base_seed, games, ep)
        if self.learner_seat_mode == "random":
            seat_hash = episode_seed(self.base_seed, games, ep, salt=0x5EA7)
            self.seat[games] = (seat_hash % np.uint64(self.num_players)).astype(np.int64)
        self.episode[games] = ep + 1
        # Engine.reset with the seeds folded to 64-bit game seeds in one vectorised pass
        # (Engine.reset folds them one by one with SeedSequence, ~10 us per game).
        eng = self.engine
        self._k_reset(_k(eng.state), _k(eng.tables), eng.cfg, games.astype(np.int64), seeds_to_u64(seeds))
        eng.seeds[games] = seeds.astype(np.int64)

    def _deal_until_learner(self, games: np.ndarray) -> None:
        """Deal ``games`` and let the opponents act up to the learner's first decision
        (redealing a game that ends before the learner has a decision, ``core.events``)."""
        for _ in range(self._kb.max_redeals):
            self._deal(games)
            self._play_opponents(games, None)
            games = games[self._done[games] != 0]
            if games.size == 0:
                return
        raise RuntimeError(f"no deal in {self._kb.max_redeals} gave the learner a decision")  # pragma: no cover

    # ------------------------------------------------------------------ opponents
    def _encode(self, rows: np.ndarray, viewers: np.ndarray, out: np.ndarray) -> None:
        eng = self.engine
        self._kb.encode_rows(_k(eng.state), _k(eng.tables), eng.cfg, rows, viewers, eng._offs, out)

    def _play_opponents(self, games: np.ndarray | None, acc: np.ndarray | None) -> None:
        """Opponents act, all games together, until every game in ``games`` (default all)
        waits for its learner or is over. Adds the learner's step rewards to ``acc``.

        Each round: the games where an opponent decides, their deciders' observations
        and masks (the game's ``gather``), one ``act_batch`` per opponent agent, one engine step of
        those games (``step_rows``: the others are not read), then the games still waiting."""
        eng = self.engine
        S, TB, cfg, offs = _k(eng.state), _k(eng.tables), eng.cfg, eng._offs
        seat, P, step_rows = self.seat, self.num_players, self._k_step_rows
        buf_a, buf_b = self._rows_a, self._rows_b
        rows = self._arange if games is None else games
        n = _waiting(S, rows, seat, buf_a)
        use_acc = acc is not None
        acc = acc if use_acc else self.rewards
        sparse = self.sparse_opponents
        gather = self._kb.gather_csr if sparse else self._kb.gather
        if sparse and self._opp_cols is None:
            B = self.num_envs
            self._opp_cols = np.zeros(B * 192 + self.obs_size, np.int64)
            self._opp_vals = np.zeros(B * 192 + self.obs_size, np.float32)
            self._opp_starts = np.zeros(B, np.int64)
        while n:
            idx = buf_a[:n]
            viewers, obs, masks = self._opp_viewers[:n], self._opp_obs[:n], self._opp_masks[:n]
            if sparse:
                k = gather(S, TB, cfg, idx, offs, viewers, obs, masks, self._opp_cols, self._opp_vals, self._opp_starts)
                self.opp_csr = None if k < 0 else (self._opp_cols[:k], self._opp_vals[:k], self._opp_starts[:n])
            else:
                gather(S, TB, cfg, idx, offs, viewers, obs, masks)
                self.opp_csr = None
            chosen = np.ascontiguousarray(self._opponent_actions(idx, (viewers - seat[idx]) % P - 1, obs, masks),
                                          np.int64)
            self._check_opponent_actions(idx, chosen, masks)
            step_rows(S, TB, cfg, idx, chosen)  # only the games that act (a late round may hold a few of thousands)
            n = _after_step(S, idx, seat, acc, use_acc, buf_b)
            buf_a, buf_b = buf_b, buf_a

    def _opponent_actions(self, idx: np.ndarray, rel: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The opponents' actions in games ``idx``, the deciders sitting ``rel + 1`` seats
        after the learner; a subclass changes who the opponents are by overriding this."""
        if self.shared_opponent:
            return np.asarray(self.opponents[0].act_batch(obs, masks))
        return self.decide(self.opponents, rel, obs, masks)

    def _check_opponent_actions(self, idx, chosen, masks) -> None:
        if chosen.shape != (idx.size,):
            raise ValueError(f"an opponent's act_batch returned shape {chosen.shape} for {idx.size} games")
        i = _first_illegal_choice(masks, chosen)
        if i >= 0:
            g = int(idx[i])
            raise IllegalActionError(
                g, int(chosen[i]), [int(x) for x in np.flatnonzero(masks[i])],
                self._phase_names[self.engine.state["phase"][g]], self.engine.describe_action,
            )

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal every game anew: episode 0 of each game's stream under the base seed
        (``seed``, else the current one); opponents are reseeded from the same base."""
        if seed is not None:
            self.base_seed = int(seed)
        reseed_agents(self.opponents, np.random.default_rng(np.random.SeedSequence([self.base_seed, 0xA6E7])))
        self.episode[:] = 0
        with self.threads:
            if self.compiled_opponents:
                self._next_obs_buffer()
                eng = self.engine
                failed = self._k_fast_reset(_k(eng.state), _k(eng.tables), eng.cfg, *self._fast_args(),
                                            self.obs, self.masks)
                self._check_deals(failed)
                eng.seeds[:] = self._game_seeds.tolist()
            else:
                self._deal_until_learner(self._arange)
                self._observe_learners()
        self.dones[:] = False
        self.rewards[:] = 0.0
        self._started = True
        return self.obs

    def _next_obs_buffer(self) -> None:
        self._ring_i = (self._ring_i + 1) % len(self._obs_ring)
        self.obs = self._obs_ring[self._ring_i]

    def _check_deals(self, failed: int) -> None:
        if failed:  # pragma: no cover - needs a learner without a real decision in 100 deals
            raise RuntimeError(f"no deal in {self._kb.max_redeals} gave the learner a decision ({failed} games)")

    def _observe_learners(self) -> None:
        """Every learner's observation into the next ring buffer, and its mask."""
        self._next_obs_buffer()
        eng = self.engine
        self._k_encode(_k(eng.state), _k(eng.tables), eng.cfg, self.seat, eng._offs, self.obs)
        np.copyto(self.masks, self._mask_view)

    def check_actions(self, actions) -> np.ndarray:
        """``actions`` as one int64 action per game, every one legal, else ``IllegalActionError``
        (a malformed batch: ``ValueError``); nothing is changed."""
        a = self._action_array(actions)
        g = _first_illegal_choice(self.masks, a)
        if g >= 0:
            eng = self.engine
            raise IllegalActionError(
                g, int(a[g]), [int(x) for x in np.flatnonzero(self.masks[g])],
                self._phase_names[eng.state["phase"][g]], eng.describe_action,
            )
        return a

    def _action_array(self, actions) -> np.ndarray:
        """``actions`` as an int64 array of shape ``(num_envs,)``, else ``ValueError``: a batch
        is exactly one action per game (no other shape is flattened into one)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(
                f"step needs one action per game: an array of shape ({self.num_envs},), "
                f"got shape {a.shape}"
            )
        if a.dtype.kind not in "iuf":
            raise ValueError(f"actions must be integers, one per game, got {given(a.tolist())}")
        if not np.issubdtype(a.dtype, np.integer):
            if not np.all(np.mod(a, 1) == 0):
                raise ValueError("actions must be integers")
        return a.astype(np.int64)

    def _forfeit_illegal(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``illegal_action="terminate"``: the actions with every illegal one replaced by -1
        (the engine skips it), the forfeiting games, and their learners' last observations.
        Those games are marked over, so the step's own auto-reset deals them again."""
        a = self._action_array(actions)
        if _first_illegal_choice(self.masks, a) < 0:
            return a, np.zeros(0, np.int64), None
        inside = (a >= 0) & (a < self.num_actions)
        legal = inside & self.masks[self._arange, np.where(inside, a, 0)]
        bad = np.flatnonzero(~legal)
        last_obs = self.obs[bad].copy()
        a[bad] = -1
        self.engine.state["done"][bad] = True  # the game ends here (not stepped)
        return a, bad, last_obs

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One learner action per game. Returns ``(obs, rewards, dones, ended, terminal_obs)``:
        ``ended`` the games that finished (now redealt), ``terminal_obs`` their last
        observations (len(ended), obs_size)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.illegal_action == "terminate":
            a, bad, last_obs = self._forfeit_illegal(actions)
        else:
            a, bad, last_obs = self.check_actions(actions), self.illegal[:0], None
        # Every action is legal now (or -1 in a forfeited game): the engine need not check again.
        self.illegal = bad
        eng = self.engine
        S, TB, cfg = _k(eng.state), _k(eng.tables), eng.cfg
        with self.threads:
            if self.compiled_opponents:
                # One kernel call: learner actions, random opponents, auto-reset, observations.
                self._next_obs_buffer()
                failed = self._k_fast_step(S, TB, cfg, a, *self._fast_args(), self.obs, self.masks,
                                           self.rewards, self.dones, self._terminal)
                self._check_deals(failed)
                ended = np.flatnonzero(self.dones)
                terminal = self._terminal[ended]
                if ended.size:
                    eng.seeds[ended] = self._game_seeds[ended].tolist()
            else:
                self._k_step(S, TB, cfg, a)
                self.rewards[:] = self._step_rewards[self._arange, self.seat]
                self._play_opponents(None, self.rewards)
                np.copyto(self.dones, self._done)
                ended = np.flatnonzero(self.dones)
                terminal = np.empty((ended.size, self.obs_size), np.float32)
                if ended.size:
                    self._encode(ended, self.seat[ended], terminal)
                    self._deal_until_learner(ended)
                self._observe_learners()
        if bad.size:
            self.rewards[bad] = self.illegal_reward
            terminal[np.searchsorted(ended, bad)] = last_obs
        return self.obs, self.rewards.copy(), self.dones.copy(), ended, terminal

    def render(self, game: int = 0, mode: str = "ansi"):
        """Game ``game`` seen from its learner's seat: text (``"ansi"``) or an image (``"rgb_array"``)."""
        fn = self.game.render_rgb if mode == "rgb_array" else self.game.render_text
        return fn(self.engine, game, viewer=int(self.seat[game]))


_RENDER_MODES = (None, "ansi", "rgb_array")


def check_num_envs(num_envs) -> int:
    """``num_envs`` checked: a positive Python or numpy integer (a bool, a float, even a
    whole one, or a string is refused with ``ValueError``)."""
    if (isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1):
        raise ValueError(f"num_envs must be a positive integer (1, 2, 3, ...), got {given(num_envs)}")
    return int(num_envs)


def _batch_and_render_mode(face, num_envs, num_players, opponents, learner_seat, rules, seed, numba_threads,
                           obs_buffers, compiled_opponents, render_mode, illegal_action, illegal_reward,
                           rules_kwargs):
    """The two faces' shared construction: the batch, and a checked render mode."""
    if render_mode not in _RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")
    batch = LearnerBatch(num_envs, num_players, opponents, learner_seat, rules, seed, numba_threads,
                         obs_buffers, compiled_opponents, spec=face.game, agent_resolver=face.agent_resolver,
                         decide=face.decide, illegal_action=illegal_action, illegal_reward=illegal_reward,
                         **rules_kwargs)
    return batch, render_mode


# ---------------------------------------------------------------------------------------
# SB3 face
# ---------------------------------------------------------------------------------------
try:  # stable-baselines3 is an optional dependency (the "train" extra)
    from stable_baselines3.common.vec_env import VecEnv
except ImportError:  # pragma: no cover - exercised only without the train extra

    class VecEnv:  # type: ignore[no-redef]
        def __init__(self, *args, **kwargs):
            raise ImportError("RipMarketVecEnv needs stable-baselines3: pip install 'ripmarket[train]'")

_PER_GAME_ATTRS = {"learner_seat": "seat", "game_seed": None, "episode": "episode"}


class _Face:
    """What binds a face to a game: the spec, how opponent names are resolved and how rows
    of several agents are decided (``LearnerBatch``'s arguments)."""

    game: GameSpec
    agent_resolver = None
    decide = None


class GameVecEnv(_Face, VecEnv):
    """A Stable-Baselines3 ``VecEnv`` of ``num_envs`` games (one engine batch).

    Args are those of ``LearnerBatch``: ``num_envs``, ``num_players`` or ``rules``,
    ``opponents`` (one agent/name for all other seats or one per other seat, relative to
    the learner), ``learner_seat`` (a seat, ``"random"`` per episode, or one seat per
    game), ``seed`` (base seed), ``numba_threads``, ``obs_buffers``, ``compiled_opponents``,
    ``illegal_action`` (``"raise"`` or ``"terminate"``) and ``illegal_reward``; rule fields
    as keywords (``mode="ffa"``) as ``ripmarket_env.make`` takes them.

    MaskablePPO reads the masks with ``env_method("action_masks")``; ``action_masks()``
    returns them as one ``(num_envs, num_actions)`` array.
    """

    def __init__(self, num_envs: int = 8, num_players: int | None = None, opponents=None,
                 learner_seat: int | str | Sequence[int] = 0, rules=None,
                 seed: int | None = None, numba_threads: int | None = 1, obs_buffers: int = 2,
                 render_mode: str | None = None, compiled_opponents: bool = True,
                 illegal_action: str = "raise", illegal_reward: float = -1.0, **rules_kwargs):
        self.batch, self.render_mode = _batch_and_render_mode(
            self, num_envs, num_players, opponents, learner_seat, rules, seed, numba_threads, obs_buffers,
            compiled_opponents, render_mode, illegal_action, illegal_reward, rules_kwargs,
        )
        self.num_players = self.batch.num_players
        self._actions: np.ndarray | None = None
        super().__init__(
            self.batch.num_envs,
            self.batch.observation_space,
            spaces.Discrete(self.batch.num_actions),
        )

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        seed = self._seeds[0]
        self.batch.reset(seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.batch.obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, dones, ended, terminal = self.batch.step(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for k, g in enumerate(ended.tolist()):
            infos[g]["terminal_observation"] = terminal[k]
        for g in self.batch.illegal.tolist():
            infos[g]["illegal_action"] = True
        return obs, rewards, dones, infos

    def close(self) -> None:
        pass

    def seed(self, seed: int | None = None) -> list[int]:
        """Set the base seed used at the next ``reset``; returns each game's first deal seed."""
        if seed is None:
            seed = LearnerBatch._fresh_base()
        self._seeds = [int(seed)] * self.num_envs
        return [int(x) for x in episode_seed(seed, np.arange(self.num_envs), np.zeros(self.num_envs))]

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, num_actions)`` int8 0/1
        (the AEC env's mask type; ``batch.masks`` holds them as bool)."""
        return self.batch.masks.view(np.int8).copy()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """Per-game values for ``learner_seat``, ``game_seed`` and ``episode``; otherwise the
        env's own attribute, once per index."""
        idx = list(self._get_indices(indices))
        if attr_name == "learner_seat":
            return [int(self.batch.seat[i]) for i in idx]
        if attr_name == "game_seed":
            return [int(self.batch.engine.seeds[i]) for i in idx]
        if attr_name == "episode":
            return [int(self.batch.episode[i]) for i in idx]
        value = getattr(self, attr_name)
        return [value for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Sets the attribute on the env (shared by all games; ``indices`` cannot single one out)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """``"action_masks"`` gives one mask per game; any other method of this env is called
        once and its result given for each index."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.batch.masks.view(np.int8)[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        return [self.batch.render(g, "rgb_array") for g in range(self.num_envs)]

    def render(self, mode: str | None = None):
        mode = mode or self.render_mode or "ansi"
        return self.batch.render(0, mode)

    @property
    def engine(self) -> Engine:
        return self.batch.engine


# ---------------------------------------------------------------------------------------
# Gymnasium face
# ---------------------------------------------------------------------------------------
class LegalMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete`` whose ``sample()`` without a mask draws a legal action per game."""

    def __init__(self, nvec, legal_masks_fn=None, seed=None):
        super().__init__(nvec, seed=seed)
        self._legal_masks_fn = legal_masks_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._legal_masks_fn is not None:
            m = np.asarray(self._legal_masks_fn(), dtype=bool)
            keys = self.np_random.random(m.shape)
            keys[~m] = -1.0
            return keys.argmax(axis=1).astype(self.dtype)
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.MultiDiscrete, (self.nvec, self.dtype))


class GameGymVectorEnv(_Face, gymnasium.vector.VectorEnv):
    """A Gymnasium ``VectorEnv`` of ``num_envs`` games (one engine batch).

    Autoreset mode: ``AutoresetMode.SAME_STEP``. ``info["action_mask"]`` holds the
    learner masks ``(num_envs, num_actions)``; ``action_masks()`` returns them too;
    ``info["illegal_action"]`` ``(num_envs,)`` bool marks the games an illegal action ended
    (``illegal_action="terminate"``). Arguments as ``GameVecEnv``.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi", "rgb_array"], "name": "game"}

    def __init__(self, num_envs: int = 8, num_players: int | None = None, opponents=None,
                 learner_seat: int | str | Sequence[int] = 0, rules=None,
                 seed: int | None = None, numba_threads: int | None = 1, obs_buffers: int = 2,
                 render_mode: str | None = None, compiled_opponents: bool = True,
                 illegal_action: str = "raise", illegal_reward: float = -1.0, **rules_kwargs):
        self.batch, self.render_mode = _batch_and_render_mode(
            self, num_envs, num_players, opponents, learner_seat, rules, seed, numba_threads, obs_buffers,
            compiled_opponents, render_mode, illegal_action, illegal_reward, rules_kwargs,
        )
        self.num_envs = self.batch.num_envs
        self.num_players = self.batch.num_players
        self.single_observation_space = self.batch.observation_space
        self.single_action_space = spaces.Discrete(self.batch.num_actions)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = LegalMultiDiscrete(
            np.full(self.num_envs, self.batch.num_actions), lambda: self.batch.masks
        )
        self._truncations = np.zeros(self.num_envs, dtype=bool)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, num_actions)`` int8 0/1."""
        return self.batch.masks.view(np.int8).copy()

    def _info(self, illegal: np.ndarray | None = None) -> dict[str, Any]:
        forfeited = np.zeros(self.num_envs, dtype=bool)
        if illegal is not None:
            forfeited[illegal] = True
        return {"action_mask": self.action_masks(), "learner_seat": self.batch.seat.copy(),
                "illegal_action": forfeited}

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seed = list(seed)[0]  # one base seed for the whole batch
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(int(seed))
        obs = self.batch.reset(seed)
        return obs, self._info()

    def step(self, actions):
        obs, rewards, dones, ended, terminal = self.batch.step(actions)
        info = self._info(self.batch.illegal)
        if ended.size:
            final_obs = np.full(self.num_envs, None, dtype=object)
            for k, g in enumerate(ended.tolist()):
                final_obs[g] = terminal[k]
            info["final_obs"] = final_obs
            info["_final_obs"] = dones.copy()
            info["final_info"] = {
                "reward": np.where(dones, rewards, 0.0).astype(np.float32),
                "_reward": dones.copy(),
            }
            info["_final_info"] = dones.copy()
        return obs, rewards, dones, self._truncations.copy(), info

    def render(self):
        if self.render_mode is None:
            return None
        return tuple(self.batch.render(g, self.render_mode) for g in range(self.num_envs))

    @property
    def engine(self) -> Engine:
        return self.batch.engine


_CLASSES: dict[str, tuple[type, type]] = {}


def vec_env_classes(spec: GameSpec) -> tuple[type, type]:
    """``(GameVecEnv, GameGymVectorEnv)`` subclasses bound to a game (made once per game)."""
    if spec.id not in _CLASSES:
        _CLASSES[spec.id] = (
            type("VecEnv", (GameVecEnv,), {"game": spec}),
            type("GymVectorEnv", (GameGymVectorEnv,), {
                "game": spec, "metadata": {**GameGymVectorEnv.metadata, "name": spec.id}}),
        )
    return _CLASSES[spec.id]
