"""ripmarket: the reinforcement-learning environment and agent zoo for a family of market
card games (R.I.P. Market first).

* ``ripmarket_env.games()`` lists the registered games; ``ripmarket_env.make(game_id,
  num_players=..., **rules)`` builds a game's PettingZoo AEC env (wrapped; ``raw=True``
  for the raw env; ``parallel=True`` for the PettingZoo parallel env).
* ``ripmarket_env.parallel_env(game_id, ...)`` is a game's PettingZoo parallel env (idle
  seats wait: ``ripmarket_env.envs.parallel``).
* ``ripmarket_env.env(num_players=4, ...)`` / ``raw_env`` stay R.I.P. Market's AEC env
  (``ripmarket_v0``).
* ``ripmarket_env.rllib_env(game_id)`` is a game's RLlib ``MultiAgentEnv`` class.
* Importing the package registers every game's Gymnasium ids (``RipMarket-v0``, ...).

Everything else is imported on first use, so ``import ripmarket_env`` stays light.
The layout (core, games, envs, app) is described in docs/ARCHITECTURE.md.
"""

from ripmarket_env.core import __version__
from ripmarket_env.core.jitcache import configure as _configure_jit_cache

_configure_jit_cache()

__all__ = ["__version__", "env", "games", "make", "parallel_env", "raw_env", "replay", "rllib_env"]


def games() -> list[str]:
    """The ids of the registered games (``ripmarket_env.make(id)``)."""
    from ripmarket_env.games import ids

    return ids()


def make(game_id: str, num_players: int | None = None, render_mode: str | None = None, raw: bool = False,
         parallel: bool = False, **rules):
    """The PettingZoo AEC env of a registered game, in PettingZoo's standard wrappers
    (``raw=True``: without them; ``parallel=True``: the parallel env, ``parallel_env``).
    Rule variants are keyword fields of the game's rules config, or ``rules=<config>``."""
    if parallel:
        return parallel_env(game_id, num_players=num_players, render_mode=render_mode, **rules)
    from ripmarket_env.envs.aec import aec_env_class, wrapped
    from ripmarket_env.games import get

    e = aec_env_class(get(game_id))(num_players=num_players, render_mode=render_mode, **rules)
    return e if raw else wrapped(e)


def parallel_env(game_id: str, num_players: int | None = None, render_mode: str | None = None, **kwargs):
    """The PettingZoo parallel env of a registered game (``ripmarket_env.envs.parallel``):
    every seat acts on every step, the seats not deciding with the one legal ``wait``
    action. ``obs_format`` "dict" (the AEC env's observations), "rllib" or "box"; other
    keywords are the AEC env's (rule fields, ``rules=``, ``illegal_action``)."""
    from ripmarket_env.envs.parallel import parallel_env_class
    from ripmarket_env.games import get

    return parallel_env_class(get(game_id))(num_players=num_players, render_mode=render_mode, **kwargs)


def rllib_env(game_id: str = "ripmarket") -> type:
    """The RLlib ``MultiAgentEnv`` class of a registered game (``ripmarket_env.envs.rllib``;
    needs ``ray[rllib]``, the ``ecosystem`` extra): ``PPOConfig().environment(rllib_env(),
    env_config={"num_players": 4})``."""
    from ripmarket_env.envs.rllib import multi_agent_env_class
    from ripmarket_env.games import get

    return multi_agent_env_class(get(game_id))


def replay(path, cards=None, on_line=None, notes=None):
    """Re-play and verify a game record of any registered game (``ripmarket_env.envs.record.replay``);
    returns the one-game engine at the record's end."""
    from ripmarket_env.envs.record import replay as _replay
    from ripmarket_env.games import registry

    return _replay(path, registry(), cards=cards, on_line=on_line, notes=notes)


def _register_gym_id(spec) -> None:
    """Register a game's single-agent and vector env with Gymnasium (by entry-point string,
    the game's id in the kwargs: nothing but the game's spec is imported until
    ``gymnasium.make``)."""
    import gymnasium

    if spec.gym_id not in gymnasium.registry:
        gymnasium.register(id=spec.gym_id, entry_point="ripmarket_env.app.entry:gym_env",
                           vector_entry_point="ripmarket_env.app.entry:gym_vector_env",
                           kwargs={"game": spec.id}, nondeterministic=False)


def _register_gym_ids() -> None:
    """The packaged games' Gymnasium ids now; a game registered from outside the package
    gets its ids when it is first loaded (``ripmarket_env.make``, ``games.get``): its module
    may import anything, the agents included, so importing this package does not load it."""
    try:
        import gymnasium  # noqa: F401
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return
    from ripmarket_env.games import get, packaged, when_loaded

    for game in packaged():
        get(game)
    when_loaded(_register_gym_id)


_register_gym_ids()


def __getattr__(name: str):
    """``env`` and ``raw_env`` (R.I.P. Market's, PettingZoo's module convention), and each
    game's env classes by their qualified names, ``raw_env__<env name>`` and
    ``parallel_env__<env name>`` (how pickle finds them again)."""
    if name in ("env", "raw_env"):
        from ripmarket_env import aec

        return getattr(aec, name)
    kind, sep, env_name = name.partition("__")
    if sep and kind in ("raw_env", "parallel_env"):
        from ripmarket_env.games import by_env_name

        spec = by_env_name(env_name)
        if spec is not None:
            from ripmarket_env.envs.aec import aec_env_class
            from ripmarket_env.envs.parallel import parallel_env_class

            return (aec_env_class if kind == "raw_env" else parallel_env_class)(spec)
    raise AttributeError(f"module 'ripmarket_env' has no attribute {name!r}")
