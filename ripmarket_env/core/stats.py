"""Statistics every game's figures share (the balance reports' and the tournaments' win
rates); in the core, so a game's own analysis may use them."""

from __future__ import annotations

import math

#: z of a two-sided 95% interval
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (``(0, 1)`` when ``n`` is 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def rate(k: float, n: float) -> dict:
    """A count of ``k`` in ``n`` as the balance reports give it: ``wins`` (an integer when
    whole), ``n``, ``rate`` (None without data) and its Wilson 95% interval ``ci``."""
    lo, hi = wilson_interval(k, n)
    k = int(k) if float(k).is_integer() else round(float(k), 6)
    return {"wins": k, "n": int(n), "rate": (k / n) if n else None, "ci": [lo, hi]}


def two_proportion_p(k1: float, n1: float, k2: float, n2: float) -> float | None:
    """Two-sided p-value of the pooled two-proportion z-test (None without data on a side)."""
    if n1 <= 0 or n2 <= 0:
        return None
    pool = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pool * (1 - pool) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (k1 / n1 - k2 / n2) / se
    return math.erfc(abs(z) / math.sqrt(2))


def pct(r) -> str:
    """A rate as a percentage for a report ("—" for none)."""
    return "—" if r is None else f"{100 * r:.1f}%"


def ci_text(r: dict) -> str:
    """A ``rate`` dict as "rate% [lo, hi]" for a report ("—" without data)."""
    if r["rate"] is None:
        return "—"
    lo, hi = r["ci"]
    return f"{100 * r['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
