"""R.I.P. Market's card files as the evaluation tools' ``--cards`` hook (``GameSpec.card_files``):
a card file or a packaged edition's name (``first-edition``) instead of the packaged cards."""

from ripmarket_env.games.ripmarket.cards.loader import CardDataError as error  # noqa: F401
from ripmarket_env.games.ripmarket.cards.loader import card_file as resolve  # noqa: F401
from ripmarket_env.games.ripmarket.cards.loader import default_cards as default  # noqa: F401
from ripmarket_env.games.ripmarket.cards.loader import load_cards as load  # noqa: F401
