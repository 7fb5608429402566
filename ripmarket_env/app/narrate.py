"""R.I.P. Market's bot labels for the web page, and its words for rounds and standings
(which live with the game, ``ripmarket_env.games.ripmarket.story``, re-exported here for the
web page's session, ``ripmarket_env.app.play.GameSession``)."""

from __future__ import annotations

import agents

from ripmarket_env.games.ripmarket.story import round_story, rule_card, rule_text, standings  # noqa: F401

__all__ = ["BOT_LEVELS", "bot_level", "round_story", "rule_card", "rule_text", "standings"]

#: A plain-language difficulty for every bot of the game, from its agents' profile
#: (``agents.register_game``: the 4- and 6-player leaderboards of docs/ZOO.md).
BOT_LEVELS = agents.game_agents(agents.base.DEFAULT_GAME).levels


def bot_level(name: str) -> str:
    """The difficulty label of a bot (``"you"`` has none)."""
    if name == "you":
        return ""
    if name in BOT_LEVELS:
        return BOT_LEVELS[name]
    if name.endswith("-bc"):
        return "Easy: imitates " + name[:-3]
    if name.startswith("ppo"):
        return "Medium: an earlier training stage"
    return "Unrated"
