"""Compiled drivers of the batched learner envs (The Rune Market; a copy of R.I.P. Market's drivers over this game's kernels).

Two groups:

* Seeds. Episode ``j`` of game ``i`` under a base seed is dealt with
  ``episode_seed_one(base, 0, i, j)`` (a splitmix64 hash, 32 bits), folded to the engine's
  32-bit game seed by ``fold_seed_u32`` (numpy's ``SeedSequence`` hash for one word, so it
  equals ``core.seed_to_u32``).
* Random opponents in the kernel. When every opponent of a batch is the uniformly random
  agent, a whole learner step runs here for every game: the learner's action, the
  opponents' decisions up to the learner's next decision (each a uniformly random legal
  action drawn from the game's own opponent stream), the auto-reset of a finished game
  (its last observation kept) and the learner's new observation and mask. The games are
  independent, so the batch loop runs serially or with ``prange`` over the games.

The opponent stream of a game starts at every deal from the state
``episode_key(base, OPP_SALT, game, episode)``; each draw takes ``u = splitmix64(state) >> 32``,
advances the state by the splitmix64 increment and picks legal action number
``(u * n_legal) >> 32`` in mask order. The rules stay in ``kernels.py``; this file reads only the public face of a
game record (``done``, ``actor``, ``mask``, ``n_legal``, ``step_rewards``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ripmarket_env.core.seeds import (  # noqa: F401  (the seed hashes live in the core)
    GOLDEN,
    episode_key,
    episode_seed_one,
    episode_seeds,
    fold_seed_u32,
    fold_seeds_u32,
    splitmix64,
)
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.config import C_P
from ripmarket_env.games.runemarket.observation import encode_obs

_U = np.uint64
SEAT_SALT = 0x5EA7  # the learner's seat of an episode (learner_seat="random")
OPP_SALT = 0x0990  # the random opponents' stream of an episode
#: A deal in which the learner never gets a real decision (RM-8.1) is dealt again, at most
#: this many times.
MAX_REDEALS = 100


# ---------------------------------------------------------------------------------------
# Random opponents
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def random_legal(r, opp_rng, g):
    """A uniformly random legal action of game record ``r``, drawn from ``opp_rng[g]``."""
    x = opp_rng[g]
    opp_rng[g] = x + GOLDEN
    u = splitmix64(x) >> _U(32)
    k = np.int64((u * _U(r.n_legal)) >> _U(32))
    m = r.mask
    for a in range(m.shape[0]):
        if m[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True, nogil=True)
def play_random_opponents(r, T, c, seat, opp_rng, g):
    """Random opponents act until ``seat`` decides or the game ends; the seat's reward."""
    acc = 0.0
    while not r.done and r.actor != seat:
        K.step_game(r, T, c, random_legal(r, opp_rng, g))
        acc += r.step_rewards[seat]
    return acc


@njit(cache=True, nogil=True)
def deal_game(r, T, c, g, base, random_seat, seat, episode, game_seeds, opp_rng):
    """Deal the next episode of game ``g`` and play its random opponents up to the
    learner's first decision (dealing again if the game ends first). False if no deal in
    ``MAX_REDEALS`` gave the learner a decision."""
    P = c[C_P]
    for _ in range(MAX_REDEALS):
        ep = episode[g]
        s = episode_seed_one(base, _U(0), g, ep)
        if random_seat:
            seat[g] = np.int64(episode_seed_one(base, _U(SEAT_SALT), g, ep) % _U(P))
        opp_rng[g] = episode_key(base, _U(OPP_SALT), g, ep)
        episode[g] = ep + 1
        game_seeds[g] = np.int64(s)
        K.reset_game(r, T, c, fold_seed_u32(s))
        play_random_opponents(r, T, c, seat[g], opp_rng, g)
        if not r.done:
            return True
    return False


@njit(cache=True, nogil=True)
def _learner_view(r, T, c, seat, offs, obs_row, mask_row):
    encode_obs(r, T, c, seat, offs, obs_row)
    m = r.mask
    for a in range(mask_row.shape[0]):
        mask_row[a] = m[a]


@njit(cache=True, nogil=True)
def learner_step_game(S, T, c, g, actions, base, random_seat, seat, episode, game_seeds, opp_rng,
                      offs, obs, masks, rewards, dones, terminal):
    """One learner step of game ``g``: its action (legal), the random opponents, the
    auto-reset of a finished game (last observation into ``terminal[g]``), the learner's
    new observation and mask. False if a redeal found no learner decision."""
    r = S[g]
    s = seat[g]
    K.step_game(r, T, c, actions[g])
    acc = r.step_rewards[s]
    acc += play_random_opponents(r, T, c, s, opp_rng, g)
    rewards[g] = acc
    ok = True
    if r.done:
        dones[g] = True
        encode_obs(r, T, c, s, offs, terminal[g])
        ok = deal_game(r, T, c, g, base, random_seat, seat, episode, game_seeds, opp_rng)
    else:
        dones[g] = False
    _learner_view(r, T, c, seat[g], offs, obs[g], masks[g])
    return ok


@njit(cache=True)
def learner_step_serial(S, TB, c, actions, base, random_seat, seat, episode, game_seeds, opp_rng,
                        offs, obs, masks, rewards, dones, terminal):
    """``learner_step_game`` for every game, one thread. Returns the number of failed redeals."""
    failed = 0
    for g in range(S.shape[0]):
        if not learner_step_game(S, TB[0], c, g, actions, base, random_seat, seat, episode, game_seeds,
                                 opp_rng, offs, obs, masks, rewards, dones, terminal):
            failed += 1
    return failed


@njit(cache=True, parallel=True)
def learner_step_parallel(S, TB, c, actions, base, random_seat, seat, episode, game_seeds, opp_rng,
                          offs, obs, masks, rewards, dones, terminal):
    """``learner_step_serial`` with the games spread over numba's threads."""
    failed = 0
    for g in prange(S.shape[0]):
        if not learner_step_game(S, TB[0], c, g, actions, base, random_seat, seat, episode, game_seeds,
                                 opp_rng, offs, obs, masks, rewards, dones, terminal):
            failed += 1
    return failed


@njit(cache=True, nogil=True)
def _deal_view(S, T, c, g, base, random_seat, seat, episode, game_seeds, opp_rng, offs, obs, masks):
    r = S[g]
    ok = deal_game(r, T, c, g, base, random_seat, seat, episode, game_seeds, opp_rng)
    _learner_view(r, T, c, seat[g], offs, obs[g], masks[g])
    return ok


@njit(cache=True)
def learner_reset_serial(S, TB, c, base, random_seat, seat, episode, game_seeds, opp_rng, offs, obs, masks):
    """Deal the next episode of every game up to its learner's decision; observations and
    masks. Returns the number of failed deals."""
    failed = 0
    for g in range(S.shape[0]):
        if not _deal_view(S, TB[0], c, g, base, random_seat, seat, episode, game_seeds, opp_rng,
                          offs, obs, masks):
            failed += 1
    return failed


@njit(cache=True, parallel=True)
def learner_reset_parallel(S, TB, c, base, random_seat, seat, episode, game_seeds, opp_rng, offs, obs, masks):
    failed = 0
    for g in prange(S.shape[0]):
        if not _deal_view(S, TB[0], c, g, base, random_seat, seat, episode, game_seeds, opp_rng,
                          offs, obs, masks):
            failed += 1
    return failed


@njit(cache=True)
def random_opponents_one(S, TB, c, g, seat, opp_rng):
    """``play_random_opponents`` for game ``g`` of ``S`` (single-game envs): the seat's
    reward over the opponents' moves."""
    return play_random_opponents(S[g], TB[0], c, seat, opp_rng, g)


# ---------------------------------------------------------------------------------------
# Observations of chosen rows (the Python opponent loop of the vector env)
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def gather(S, TB, c, rows, offs, viewers, obs, masks):
    """For each row: the deciding seat, its observation and its legal-action mask."""
    for i in range(rows.shape[0]):
        r = S[rows[i]]
        v = r.actor
        viewers[i] = v
        encode_obs(r, TB[0], c, v, offs, obs[i])
        for a in range(masks.shape[1]):
            masks[i, a] = r.mask[a] != 0


@njit(cache=True, nogil=True)
def encode_rows(S, TB, c, rows, viewers, offs, out):
    for i in range(rows.shape[0]):
        encode_obs(S[rows[i]], TB[0], c, viewers[i], offs, out[i])
