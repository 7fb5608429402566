"""Integer fields of the API's request models, as JSON Schema's ``integer`` means them.

``Int``: an int, or a float with no fractional part (``123.0``); never a bool or a string.
``IntIn(low, high)``: the same within bounds that the schema states as ``minimum`` and
``maximum``. Used by the request models of every game's routes (``app.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic import Strict as StrictValue
from pydantic_core import PydanticCustomError


def _integral(value: Any) -> Any:
    """JSON Schema's ``integer`` admits ``123.0`` (a number with a zero fractional part):
    such a float becomes the int. Booleans and numbers with a fractional part are refused;
    strings too (the int itself is validated strictly)."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer, not a boolean")
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise PydanticCustomError("int_from_float", "Input should be a valid integer, got a number with a "
                                                    "fractional part")
    return value


#: An integer field: an int, or a float with no fractional part (``123.0``); never a bool or a string.
Int = Annotated[int, StrictValue(), BeforeValidator(_integral)]


def IntIn(low: int, high: int):
    """``Int`` from ``low`` to ``high``. The bounds sit inside the type, before the
    validator, so that the schema states them as ``minimum`` and ``maximum``."""
    return Annotated[int, Field(ge=low, le=high), StrictValue(), BeforeValidator(_integral)]
