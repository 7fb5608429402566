"""Batch drivers written once for every game: a game gives per-row kernels, the core
compiles the loops over the batch.

A game gives four kernels over one game row ``r`` (a record of its state array), its
tables record ``T`` and its rules config ``c`` (an int64 array):

* ``reset_game(r, T, c, seed64)``: a new game from a 64-bit seed (uint64), advanced to its first
  real decision;
* ``step_game(r, T, c, a)``: clears ``r.step_rewards``; ``a < 0`` or a finished game
  changes nothing else; otherwise applies the (legal) action and advances;
* ``encode_obs(r, T, c, viewer, offs, out)``: the game seen by seat ``viewer`` into the
  float32 row ``out`` (``offs``: the game's int64 layout offsets);
* ``seat_bits(r, c)``: an int64 with bit p set when seat p carries the game's per-seat
  flag (``GameSpec.seat_flag``; R.I.P. Market: the Ghosts).

The drivers read only the public face of a row (``done``, ``actor``, ``phase``, ``mask``,
``n_legal``, ``step_rewards``) and get, from :func:`compile_drivers`, a
:class:`BatchKernels` bundle: the engine's batch loops (``reset_serial``/``reset_batch``,
``step_serial``/``step_batch``, ``encode_serial``/``encode_batch``), the single-game
calls of the AEC env (``reset_one``, ``step_one``, ``status_one``, ``observe_one``), the
vector env's learner step with compiled random opponents and auto-reset
(``learner_step_serial``/``_parallel``, ``learner_reset_serial``/``_parallel``,
``random_opponents_one``), ``encode_rows``/``gather``/``gather_csr``/``step_rows`` (``_parallel``) for its
Python opponents, and the
bench/fuzz loops ``random_play``/``random_play_obs``.

How the game's kernels reach a driver compiled once (docs/ARCHITECTURE.md, "Batch
drivers"): every driver takes as first argument ``fns``, an int64 array of the kernels'
native addresses (for each kernel, its C wrapper and its numba entry point), and turns
them into numba first-class functions (``types.FunctionType``) inside the compiled code.
Each driver is compiled with an explicit signature built from the game's dtypes and
cached on disk (``njit(sig, cache=True)``); the compiled code holds no address, so the
cache is valid in every process. Passing the kernels themselves as arguments would also
cache, but numba converts a dispatcher argument on every call (about 65 us, measured),
which the single-game envs cannot afford; an array argument costs nothing extra.

With ``NUMBA_DISABLE_JIT=1`` the same driver functions run as plain Python: ``fns`` is
then the list of the game's plain functions and the state arrays are recarray views
(``core.engine.kernel_view``).

Random streams: ``random_play`` draws actions and reseeds from the caller's ``bench_rng``
(``core.kernels.random_legal``/``bench_u32``); the learner drivers deal episode ``j`` of
game ``i`` with ``core.seeds.episode_seed_one(base, 0, i, j)`` and draw the random
opponents' actions from the stream ``episode_key(base, OPP_SALT, i, j)``: each draw takes
``u = splitmix64(state) >> 32``, advances the state by the splitmix64 increment and picks
legal action number ``(u * n_legal) >> 32`` in mask order.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange, types

from ripmarket_env.core.kernels import append_nonzeros, bench_u32, nth_legal, random_legal
from ripmarket_env.core.seeds import GOLDEN, episode_key, episode_seed_one, fold_seed_u64, splitmix64

try:
    from numba.core.config import DISABLE_JIT as NO_JIT
except ImportError:  # pragma: no cover
    NO_JIT = False

_U = np.uint64
SEAT_SALT = 0x5EA7  # the learner's seat of an episode (random learner seats)
OPP_SALT = 0x0990  # the random opponents' stream of an episode
#: A deal in which the learner never gets a real decision is dealt again, at most this
#: many times.
MAX_REDEALS = 100

#: Positions of the kernels in ``fns`` (two entries each: C wrapper, numba entry point).
RESET, STEP, ENCODE, BITS = 0, 2, 4, 6
_KERNELS = ("reset_game", "step_game", "encode_obs", "seat_bits")

HOT = dict(cache=True, nogil=True)


# ---------------------------------------------------------------------------------------
# The game's kernels as first-class functions inside compiled code
# ---------------------------------------------------------------------------------------
if NO_JIT:

    def _row_fn(fns, k, S, TB, c):
        return fns[k]

    def _reset_fn(fns, k, S, TB, c):
        return fns[k]

    def _encode_fn(fns, k, S, TB, c, offs, out):
        return fns[k]

    def _bits_fn(fns, k, S, c):
        return fns[k]

else:
    from numba.core import cgutils
    from numba.extending import intrinsic

    def _fn_value(context, builder, fnty, fns, k):
        """The FunctionType value whose C wrapper is ``fns[k]`` and numba entry point
        ``fns[k + 1]`` (calls go through the entry point: exceptions propagate)."""
        arr = context.make_array(types.Array(types.int64, 1, "C"))(context, builder, fns)
        vp = context.get_value_type(types.voidptr)
        k1 = builder.add(k, context.get_constant(types.intp, 1))
        c_addr = builder.load(builder.gep(arr.data, [k]))
        j_addr = builder.load(builder.gep(arr.data, [k1]))
        f = cgutils.create_struct_proxy(fnty)(context, builder)
        f.c_addr = builder.inttoptr(c_addr, vp)
        f.py_addr = cgutils.get_null_value(vp)
        f.jit_addr = builder.inttoptr(j_addr, vp)
        return f._getvalue()

    def _make_intrinsic(kernel_sig):
        """An intrinsic ``(fns, k, *like) -> FunctionType(kernel_sig(*like))``: the
        kernel's function type follows from the driver's own argument types."""

        def typer(typingctx, fns, k, *like):
            fnty = types.FunctionType(kernel_sig(*like))

            def codegen(context, builder, sig, args):
                kk = context.cast(builder, args[1], sig.args[1], types.intp)
                return _fn_value(context, builder, fnty, args[0], kk)

            return fnty(fns, k, *like), codegen

        return typer

    @intrinsic
    def _row_fn(typingctx, fns, k, S, TB, c):
        return _make_intrinsic(row_sig)(typingctx, fns, k, S, TB, c)

    @intrinsic
    def _reset_fn(typingctx, fns, k, S, TB, c):
        return _make_intrinsic(reset_sig)(typingctx, fns, k, S, TB, c)

    @intrinsic
    def _encode_fn(typingctx, fns, k, S, TB, c, offs, out):
        return _make_intrinsic(encode_sig)(typingctx, fns, k, S, TB, c, offs, out)

    @intrinsic
    def _bits_fn(typingctx, fns, k, S, c):
        return _make_intrinsic(bits_sig)(typingctx, fns, k, S, c)


#: The kernels as first-class functions, for a caller's own compiled loop bound with
#: :meth:`BatchKernels.bind`: ``step_kernel(fns, STEP, S, TB, c)`` is the game's
#: ``step_game``, ``encode_kernel(fns, ENCODE, S, TB, c, offs, out)`` its ``encode_obs``.
step_kernel, encode_kernel = _row_fn, _encode_fn


def row_sig(S, TB, c):
    """``step_game``: (row, tables row, config, int64 action) -> None."""
    return types.none(S.dtype, TB.dtype, c, types.int64)


def reset_sig(S, TB, c):
    """``reset_game``: (row, tables row, config, uint64 seed) -> None."""
    return types.none(S.dtype, TB.dtype, c, types.uint64)


def encode_sig(S, TB, c, offs, out):
    """``encode_obs``: (row, tables row, config, viewer, offsets, float32 row) -> None."""
    return types.none(S.dtype, TB.dtype, c, types.int64, offs, out.copy(ndim=1))


def bits_sig(S, c):
    """``seat_bits``: (row, config) -> int64."""
    return types.int64(S.dtype, c)


# ---------------------------------------------------------------------------------------
# Engine loops
# ---------------------------------------------------------------------------------------
def reset_batch(fns, S, TB, c, idx, seeds64):
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    for i in prange(idx.shape[0]):
        reset_game(S[idx[i]], TB[0], c, seeds64[i])


def reset_serial(fns, S, TB, c, idx, seeds64):
    """``reset_batch`` without threads (small batches: no thread start-up cost)."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    for i in range(idx.shape[0]):
        reset_game(S[idx[i]], TB[0], c, seeds64[i])


def step_batch(fns, S, TB, c, actions):
    step_game = _row_fn(fns, STEP, S, TB, c)
    for g in prange(actions.shape[0]):
        step_game(S[g], TB[0], c, actions[g])


def step_serial(fns, S, TB, c, actions):
    """``step_batch`` without threads (small batches)."""
    step_game = _row_fn(fns, STEP, S, TB, c)
    for g in range(actions.shape[0]):
        step_game(S[g], TB[0], c, actions[g])


def step_rows_parallel(fns, S, TB, c, rows, actions):
    """Step game ``rows[i]`` with ``actions[i]`` (legal, or -1: no step); the other games
    are not read, as an opponent round of a learner batch, where a few of thousands of
    games may act, needs."""
    step_game = _row_fn(fns, STEP, S, TB, c)
    for i in prange(rows.shape[0]):
        step_game(S[rows[i]], TB[0], c, actions[i])


def step_rows(fns, S, TB, c, rows, actions):
    """``step_rows_parallel`` without threads."""
    step_game = _row_fn(fns, STEP, S, TB, c)
    for i in range(rows.shape[0]):
        step_game(S[rows[i]], TB[0], c, actions[i])


def encode_batch(fns, S, TB, c, viewers, offs, out):
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, out)
    for g in prange(out.shape[0]):
        encode_obs(S[g], TB[0], c, viewers[g], offs, out[g])


def encode_serial(fns, S, TB, c, viewers, offs, out):
    """``encode_batch`` without threads (small batches)."""
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, out)
    for g in range(out.shape[0]):
        encode_obs(S[g], TB[0], c, viewers[g], offs, out[g])


def encode_rows(fns, S, TB, c, rows, viewers, offs, out):
    """Row ``rows[i]`` seen by seat ``viewers[i]`` into ``out[i]``."""
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, out)
    for i in range(rows.shape[0]):
        encode_obs(S[rows[i]], TB[0], c, viewers[i], offs, out[i])


def gather(fns, S, TB, c, rows, offs, viewers, obs, masks):
    """For each row: the deciding seat, its observation and its legal-action mask."""
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    for i in range(rows.shape[0]):
        r = S[rows[i]]
        v = np.int64(r.actor)
        viewers[i] = v
        encode_obs(r, TB[0], c, v, offs, obs[i])
        for a in range(masks.shape[1]):
            masks[i, a] = r.mask[a] != 0


def gather_csr(fns, S, TB, c, rows, offs, viewers, obs, masks, cols, vals, starts):
    """``gather``, and each observation's non-zeros as CSR (``cols``/``vals`` from
    ``starts[i]``), read while the row just written is in cache: what network opponents
    take as their first layer's input (``agents.sparse``). Returns the number of entries,
    or -1 when ``cols`` cannot hold them all (observations and masks are complete then)."""
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    d = obs.shape[1]
    cap = cols.shape[0]
    k = 0
    for i in range(rows.shape[0]):
        r = S[rows[i]]
        v = np.int64(r.actor)
        viewers[i] = v
        x = obs[i]
        encode_obs(r, TB[0], c, v, offs, x)
        for a in range(masks.shape[1]):
            masks[i, a] = r.mask[a] != 0
        starts[i] = k
        if k < 0 or k + d > cap:
            k = -1
            continue
        k = append_nonzeros(x, 0, cols, vals, k)
    return k


# ---------------------------------------------------------------------------------------
# Single games (the AEC env's hot loop): each call returns the game's status
# ---------------------------------------------------------------------------------------
@njit(**HOT)
def _status(r, seat_bits, c):
    return r.done, r.actor, r.phase, seat_bits(r, c)


def reset_one(fns, S, TB, c, g, seed64):
    """Reset game ``g`` alone; ``(done, actor, phase, seat_bits)``."""
    _reset_fn(fns, RESET, S, TB, c)(S[g], TB[0], c, seed64)
    return _status(S[g], _bits_fn(fns, BITS, S, c), c)


def step_one(fns, S, TB, c, g, a):
    """Step game ``g`` alone (``a`` must be legal); its status."""
    _row_fn(fns, STEP, S, TB, c)(S[g], TB[0], c, a)
    return _status(S[g], _bits_fn(fns, BITS, S, c), c)


def status_one(fns, S, c, g):
    return _status(S[g], _bits_fn(fns, BITS, S, c), c)


# ---------------------------------------------------------------------------------------
# Random play (bench and fuzz loops)
# ---------------------------------------------------------------------------------------
@njit(**HOT)
def _random_play_one(reset_game, step_game, r, T, c, steps, bench_rng, g, finished):
    for _ in range(steps):
        if r.done:
            finished[g] += 1
            reset_game(r, T, c, _U(bench_u32(bench_rng, g)))
        step_game(r, T, c, random_legal(r, bench_rng, g))


def random_play(fns, S, TB, c, steps_per_game, bench_rng):
    """Each game takes ``steps_per_game`` random legal decisions, starting a new game
    (seeded from ``bench_rng``) whenever one ends. Returns the games finished per row."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    B = S.shape[0]
    finished = np.zeros(B, np.int64)
    for g in prange(B):
        _random_play_one(reset_game, step_game, S[g], TB[0], c, steps_per_game, bench_rng, g, finished)
    return finished


@njit(**HOT)
def _play_obs_one(reset_game, step_game, encode_obs, r, T, c, steps, bench_rng, g, finished, offs, out):
    for _ in range(steps):
        if r.done:
            finished[g] += 1
            reset_game(r, T, c, _U(bench_u32(bench_rng, g)))
        encode_obs(r, T, c, np.int64(r.actor), offs, out)
        step_game(r, T, c, random_legal(r, bench_rng, g))


def random_play_obs(fns, S, TB, c, steps_per_game, bench_rng, offs, out):
    """``random_play`` plus, before each decision, the deciding seat's observation into
    ``out[g]``; the same actions and reseeds, so both play the same games."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, out)
    B = S.shape[0]
    finished = np.zeros(B, np.int64)
    for g in prange(B):
        _play_obs_one(reset_game, step_game, encode_obs, S[g], TB[0], c, steps_per_game, bench_rng, g,
                      finished, offs, out[g])
    return finished


# ---------------------------------------------------------------------------------------
# The learner step with compiled random opponents and auto-reset
# ---------------------------------------------------------------------------------------
@njit(**HOT)
def _opp_legal(r, opp_rng, g):
    """A uniformly random legal action of row ``r``, drawn from ``opp_rng[g]``."""
    x = opp_rng[g]
    opp_rng[g] = x + GOLDEN
    u = splitmix64(x) >> _U(32)
    return nth_legal(r.mask, np.int64((u * _U(r.n_legal)) >> _U(32)))


@njit(**HOT)
def _play_random_opponents(step_game, r, T, c, seat, opp_rng, g):
    """Random opponents act until ``seat`` decides or the game ends; the seat's reward."""
    acc = 0.0
    while not r.done and r.actor != seat:
        step_game(r, T, c, _opp_legal(r, opp_rng, g))
        acc += r.step_rewards[seat]
    return acc


@njit(**HOT)
def _deal_game(reset_game, step_game, r, T, c, g, base, random_seats, seat, episode, game_seeds, opp_rng):
    """Deal the next episode of game ``g`` (the learner's seat drawn among
    ``random_seats`` seats when that is positive) and play its random opponents up to
    the learner's first decision, dealing again if the game ends first. False if no
    deal in ``MAX_REDEALS`` gave the learner a decision."""
    for _ in range(MAX_REDEALS):
        ep = episode[g]
        s = episode_seed_one(base, _U(0), g, ep)
        if random_seats > 0:
            seat[g] = np.int64(episode_seed_one(base, _U(SEAT_SALT), g, ep) % _U(random_seats))
        opp_rng[g] = episode_key(base, _U(OPP_SALT), g, ep)
        episode[g] = ep + 1
        game_seeds[g] = np.int64(s)
        reset_game(r, T, c, fold_seed_u64(s))
        _play_random_opponents(step_game, r, T, c, seat[g], opp_rng, g)
        if not r.done:
            return True
    return False


@njit(**HOT)
def _learner_view(encode_obs, r, T, c, seat, offs, obs_row, mask_row):
    encode_obs(r, T, c, seat, offs, obs_row)
    m = r.mask
    for a in range(mask_row.shape[0]):
        mask_row[a] = m[a]


@njit(**HOT)
def _learner_step_game(reset_game, step_game, encode_obs, S, T, c, g, actions, base, random_seats, seat,
                       episode, game_seeds, opp_rng, offs, obs, masks, rewards, dones, terminal):
    """One learner step of game ``g``: its (legal) action, the random opponents, the
    auto-reset of a finished game (last observation into ``terminal[g]``), the learner's
    new observation and mask. False if a redeal found no learner decision."""
    r = S[g]
    s = seat[g]
    step_game(r, T, c, actions[g])
    acc = r.step_rewards[s]
    acc += _play_random_opponents(step_game, r, T, c, s, opp_rng, g)
    rewards[g] = acc
    ok = True
    if r.done:
        dones[g] = True
        encode_obs(r, T, c, s, offs, terminal[g])
        ok = _deal_game(reset_game, step_game, r, T, c, g, base, random_seats, seat, episode, game_seeds, opp_rng)
    else:
        dones[g] = False
    _learner_view(encode_obs, r, T, c, seat[g], offs, obs[g], masks[g])
    return ok


def learner_step_serial(fns, S, TB, c, actions, base, random_seats, seat, episode, game_seeds, opp_rng,
                        offs, obs, masks, rewards, dones, terminal):
    """``_learner_step_game`` for every game, one thread. Returns the failed redeals."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    failed = 0
    for g in range(S.shape[0]):
        if not _learner_step_game(reset_game, step_game, encode_obs, S, TB[0], c, g, actions, base,
                                  random_seats, seat, episode, game_seeds, opp_rng, offs, obs, masks,
                                  rewards, dones, terminal):
            failed += 1
    return failed


def learner_step_parallel(fns, S, TB, c, actions, base, random_seats, seat, episode, game_seeds, opp_rng,
                          offs, obs, masks, rewards, dones, terminal):
    """``learner_step_serial`` with the games spread over numba's threads."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    failed = 0
    for g in prange(S.shape[0]):
        if not _learner_step_game(reset_game, step_game, encode_obs, S, TB[0], c, g, actions, base,
                                  random_seats, seat, episode, game_seeds, opp_rng, offs, obs, masks,
                                  rewards, dones, terminal):
            failed += 1
    return failed


@njit(**HOT)
def _deal_view(reset_game, step_game, encode_obs, S, T, c, g, base, random_seats, seat, episode, game_seeds,
               opp_rng, offs, obs, masks):
    r = S[g]
    ok = _deal_game(reset_game, step_game, r, T, c, g, base, random_seats, seat, episode, game_seeds, opp_rng)
    _learner_view(encode_obs, r, T, c, seat[g], offs, obs[g], masks[g])
    return ok


def learner_reset_serial(fns, S, TB, c, base, random_seats, seat, episode, game_seeds, opp_rng, offs, obs,
                         masks):
    """Deal the next episode of every game up to its learner's decision; observations and
    masks. Returns the number of failed deals."""
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    failed = 0
    for g in range(S.shape[0]):
        if not _deal_view(reset_game, step_game, encode_obs, S, TB[0], c, g, base, random_seats, seat,
                          episode, game_seeds, opp_rng, offs, obs, masks):
            failed += 1
    return failed


def learner_reset_parallel(fns, S, TB, c, base, random_seats, seat, episode, game_seeds, opp_rng, offs, obs,
                           masks):
    reset_game = _reset_fn(fns, RESET, S, TB, c)
    step_game = _row_fn(fns, STEP, S, TB, c)
    encode_obs = _encode_fn(fns, ENCODE, S, TB, c, offs, obs)
    failed = 0
    for g in prange(S.shape[0]):
        if not _deal_view(reset_game, step_game, encode_obs, S, TB[0], c, g, base, random_seats, seat,
                          episode, game_seeds, opp_rng, offs, obs, masks):
            failed += 1
    return failed


def random_opponents_one(fns, S, TB, c, g, seat, opp_rng):
    """The random opponents of game ``g`` act until ``seat`` decides or the game ends
    (single-game envs); the seat's reward over their moves."""
    step_game = _row_fn(fns, STEP, S, TB, c)
    return _play_random_opponents(step_game, S[g], TB[0], c, seat, opp_rng, g)


# ---------------------------------------------------------------------------------------
# Compiling the bundle
# ---------------------------------------------------------------------------------------
def _signatures(state_dtype, tables_dtype):
    """Each driver's argument types (after ``fns``) and whether it runs threads."""
    from numba import from_dtype

    A = lambda t, nd=1: types.Array(t, nd, "C")  # noqa: E731
    S, TB, c = A(from_dtype(state_dtype)), A(from_dtype(tables_dtype)), A(types.int64)
    i64, i64a, u64, u64a = types.int64, A(types.int64), types.uint64, A(types.uint64)
    f32a, f32m, bm = A(types.float32), A(types.float32, 2), A(types.boolean, 2)
    learner = (u64, i64, i64a, i64a, i64a, u64a, i64a, f32m, bm)
    sigs = {
        "reset_batch": ((S, TB, c, i64a, u64a), True),
        "reset_serial": ((S, TB, c, i64a, u64a), False),
        "step_batch": ((S, TB, c, i64a), True),
        "step_serial": ((S, TB, c, i64a), False),
        "step_rows": ((S, TB, c, i64a, i64a), False),
        "step_rows_parallel": ((S, TB, c, i64a, i64a), True),
        "encode_batch": ((S, TB, c, i64a, i64a, f32m), True),
        "encode_serial": ((S, TB, c, i64a, i64a, f32m), False),
        "encode_rows": ((S, TB, c, i64a, i64a, i64a, f32m), False),
        "gather": ((S, TB, c, i64a, i64a, i64a, f32m, bm), False),
        "gather_csr": ((S, TB, c, i64a, i64a, i64a, f32m, bm, i64a, f32a, i64a), False),
        "reset_one": ((S, TB, c, i64, u64), False),
        "step_one": ((S, TB, c, i64, i64), False),
        "status_one": ((S, c, i64), False),
        "random_play": ((S, TB, c, i64, i64a), True),
        "random_play_obs": ((S, TB, c, i64, i64a, i64a, f32m), True),
        "learner_step_serial": ((S, TB, c, i64a) + learner + (f32a, A(types.boolean), f32m), False),
        "learner_step_parallel": ((S, TB, c, i64a) + learner + (f32a, A(types.boolean), f32m), True),
        "learner_reset_serial": ((S, TB, c) + learner, False),
        "learner_reset_parallel": ((S, TB, c) + learner, True),
        "random_opponents_one": ((S, TB, c, i64, i64, u64a), False),
    }
    kernel_sigs = (reset_sig(S, TB, c), row_sig(S, TB, c), encode_sig(S, TB, c, i64a, f32m), bits_sig(S, c))
    return sigs, kernel_sigs


DRIVERS = (
    "reset_batch", "reset_serial", "step_batch", "step_serial", "step_rows", "step_rows_parallel", "encode_batch", "encode_serial",
    "encode_rows", "gather", "gather_csr", "reset_one", "step_one", "status_one", "random_play", "random_play_obs",
    "learner_step_serial", "learner_step_parallel", "learner_reset_serial", "learner_reset_parallel",
    "random_opponents_one",
)
_ALIASES = {"observe_one": "encode_serial"}


class _Bound(functools.partial):
    """A compiled driver with the game's kernels bound (``stats``: numba's cache counts)."""

    @property
    def stats(self):
        return getattr(self.func, "stats", None)

    def direct(self, *sample):
        """This driver as a call without numba's type dispatch, for a caller that always
        passes arguments of the types of ``sample`` (its own arrays and ints): the entry
        point of the driver's one compiled version, the kernels bound, when ``sample``'s
        types are that version's (else this driver itself, e.g. in the no-JIT twin).
        Dispatch resolves each argument's type on every call, about 1.5 us of a one-game
        call such as the AEC env's step and observation; the entry point skips it."""
        d = self.func
        sigs = getattr(d, "signatures", None)
        if not sigs or len(sigs) != 1 or not hasattr(d, "typeof_pyval"):
            return self
        args = (*self.args, *sample)
        if tuple(d.typeof_pyval(x) for x in args) != tuple(sigs[0]):
            return self
        return functools.partial(d.overloads[sigs[0]].entry_point, *self.args)


def _kernel_addresses(kernels, kernel_sigs) -> np.ndarray:
    """For each kernel: the addresses of its C wrapper and numba entry point compiled
    for its signature (a clear TypeError if the kernel returns the wrong type)."""
    from numba.experimental.function_type import _get_jit_address, _get_wrapper_address

    out = []
    for name, fn, sig in zip(_KERNELS, kernels, kernel_sigs):
        if not hasattr(fn, "get_compile_result"):
            raise TypeError(f"{name} must be a numba.njit function, got {fn!r}")
        args = tuple(sig.args)
        if args not in fn.overloads:
            fn.compile(args)  # the kernel's own return type (a declared one would be cast to)
        got = types.unliteral(fn.overloads[args].signature.return_type)
        if got != sig.return_type:
            raise TypeError(f"{name} must return {sig.return_type} for the drivers, but returns {got}")
        out += [_get_wrapper_address(fn, sig), _get_jit_address(fn, sig)]
    return np.array(out, dtype=np.int64)


class BatchKernels:
    """A game's batch drivers, compiled on first use of each (see the module docstring
    for the names and arguments). ``BatchKernels(name=fn, ...)`` bundles hand-made
    drivers instead; :func:`compile_drivers` builds the core's for a game."""

    max_redeals = MAX_REDEALS

    def __init__(self, _builder=None, **given):
        self._builder = _builder
        self._recipe = None
        self.__dict__.update(given)

    def __reduce__(self):
        # The bound kernel addresses belong to this process: a copy elsewhere is rebuilt
        # from its recipe (the dtypes and kernels), never from the addresses.
        if self._builder is None:
            return (_given, (self.__class__, {k: v for k, v in self.__dict__.items() if not k.startswith("_")}))
        return self._recipe or (compile_drivers, self._builder.recipe)

    def __deepcopy__(self, memo):
        return self  # compiled code and addresses: shared, never copied

    def bind(self, py, *argtypes):
        """``py(fns, S, TB, c, *args)`` compiled like the core's drivers (serial, cached on
        disk, the game's kernels bound): a loop of the caller's own over this game's rows
        that calls its kernels through :data:`step_kernel` / :data:`encode_kernel`.
        ``argtypes``: the numba types of ``args``. Compiled once per function and game."""
        builder = self.__dict__.get("_builder")
        if builder is None:
            raise TypeError("bind needs the core's compiled drivers (compile_drivers), not a hand-made bundle")
        bound = self.__dict__.setdefault("_bound", {})
        key = (py, tuple(argtypes))
        if key not in bound:
            head = () if NO_JIT else builder.sigs["step_serial"][0][:3]  # S, TB, c
            bound[key] = builder.compile(py, head + tuple(argtypes), parallel=False)
        return bound[key]

    def __getattr__(self, name):
        builder = self.__dict__.get("_builder")
        if builder is None or name.startswith("_"):
            raise AttributeError(name)
        fn = builder(_ALIASES.get(name, name))
        setattr(self, name, fn)
        return fn


#: The FastPath of a game's spec is its BatchKernels (reset_one, step_one, status_one,
#: observe_one).
FastPath = BatchKernels


def _given(cls, given):
    return cls(**given)


class _Builder:
    def __init__(self, state_dtype, tables_dtype, kernels):
        self.recipe = (state_dtype, tables_dtype) + tuple(kernels)
        self.sigs, self.kernel_sigs = (None, None) if NO_JIT else _signatures(state_dtype, tables_dtype)
        self.kernels = kernels
        self._fns = None

    def fns(self):
        if self._fns is None:
            if NO_JIT:
                self._fns = [k for fn in self.kernels for k in (fn, None)]
            else:
                self._fns = _kernel_addresses(self.kernels, self.kernel_sigs)
        return self._fns

    def __call__(self, name):
        if name not in DRIVERS:
            raise AttributeError(f"no batch driver named {name!r}; the drivers are {', '.join(DRIVERS)}")
        argtypes, parallel = (None, False) if NO_JIT else self.sigs[name]
        return self.compile(globals()[name], argtypes, parallel)

    def compile(self, py, argtypes, parallel: bool):
        """``py`` compiled for ``(fns, *argtypes)`` with the kernels bound (after ``fns``,
        the core's drivers take ``S, TB, c``; ``bind`` prepends them)."""
        if NO_JIT:
            return functools.partial(py, self.fns())
        from numba.core.types import Array as _A

        fns_t = _A(types.int64, 1, "C")
        disp = njit((fns_t,) + argtypes, cache=True, parallel=parallel, nogil=not parallel)(py)
        return _Bound(disp, self.fns())


def drivers_once(store: dict, owner, state_dtype, tables_dtype, kernels) -> BatchKernels:
    """A game's ``compile_drivers`` bundle for one state layout, built once in ``store``
    (the game's module-level dict). ``kernels()`` gives the four kernels (called on the
    first use of a layout, so a game imports its encoder late); ``owner`` is the game's
    module-level ``drivers_for(state_dtype, tables_dtype)``, which a pickled engine calls
    to find this bundle again in the process that loads it."""
    key = (np.dtype(state_dtype), np.dtype(tables_dtype))
    drv = store.get(key)
    if drv is None:
        drv = store[key] = compile_drivers(key[0], key[1], *kernels())
        drv._recipe = (owner, key)
    return drv


def compile_drivers(state_dtype, tables_dtype, reset_game, step_game, encode_obs, seat_bits) -> BatchKernels:
    """The core's batch drivers for one game, from the game's state and tables dtypes
    (one record each, as ``numba.from_dtype`` reads them) and its four per-row kernels
    (njit functions; see the module docstring for their signatures). Each driver is
    compiled (or loaded from numba's cache) the first time it is used."""
    return BatchKernels(_Builder(np.dtype(state_dtype), np.dtype(tables_dtype),
                                 (reset_game, step_game, encode_obs, seat_bits)))
