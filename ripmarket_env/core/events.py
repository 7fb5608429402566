"""What the turn-based games' decoded events share (``games/<id>/events.py``), and the
cross-game rule for forced decisions that every engine applies.

Forced decisions reveal nothing (every game; R.I.P. Market R-12.1, Black Market BM-12.3,
The Rune Market RM-8.1):

* A decision that only the deciding seat's hidden cards make single (one legal option
  because of what is in its hand) is still asked of that seat: the engine stops there, the
  seat is the actor (the AEC env's ``agent_selection``) and its mask holds the one legal
  action, exactly as when its hand offered several. Unless the game's rules make the fact
  public, taking it automatically would tell every other seat something about that hand
  (through the acting seat, the phase, the step count or an "only choice" text).
* A decision whose single option follows from public facts alone (hand and pile sizes,
  the table, who has acted) may stay automatic: the engine takes it inside ``advance``
  and logs a ``forced`` marker before the decision's own events. Its marker goes on the
  decision's own event (a draw, not a reshuffle logged before it).
* No event text marks a hidden-forced decision as forced, to anyone: it was asked.

Each game's kernels name their hidden-forced decisions in one predicate
(``hidden_forced``) and each rules page lists the decisions that stay automatic and why
they reveal nothing. The conformance suite checks the rule for every registered game
(``ripmarket_env.testing.conformance.check_forced_moves_hidden``: two worlds a seat
cannot tell apart, the same action, the same events, markers, actor and phase)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnEvent:
    """The fields every event of a turn-based game carries, in this order: what happened
    (``kind``), the seat it concerns (-1: the whole table), two numbers whose meaning the
    kind gives, the turn number and whether the engine took the decision as the only
    choice (only ever one whose single option follows from public facts, see the module
    docstring). A game's ``Event`` subclasses this and adds the texts and who may read
    them."""

    kind: str
    seat: int
    a: int
    b: int
    turn: int
    forced: bool
