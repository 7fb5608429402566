"""R.I.P. Market's bot labels for the web page, and its words for rounds and standings
(which live with the game, ``ripmarket_env.games.ripmarket.story``, re-exported here for the
web page's session, ``ripmarket_env.app.play.GameSession``)."""

from __future__ import annotations

from ripmarket_env.games.ripmarket.story import round_story, rule_card, rule_text, standings  # noqa: F401

__all__ = ["BOT_LEVELS", "bot_level", "round_story", "rule_card", "rule_text", "standings"]

#: A plain-language difficulty for every bot of the zoo, from the 4- and 6-player
#: leaderboards of docs/ZOO.md (random < greedy < shark < survivor/trickster/hoarder < search).
BOT_LEVELS = {
    "random": "Beginner: random moves",
    "greedy": "Easy",
    "shark": "Medium",
    "survivor": "Medium",
    "trickster": "Medium",
    "hoarder": "Medium",
    "search": "Hard: thinks ahead",
    "ppo-6p": "Hard: trained by self-play at 6 players",
    "ppo": "Hard: trained by self-play for every table size (2-10 players)",
    "search-ppo": "Hard: thinks ahead about the moves the trained bot likes",
    "ppo-lookahead": "Hardest: the trained bot for every table size (2-10 players), checking its best moves one turn ahead",
}


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
