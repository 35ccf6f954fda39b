"""The stand-in's settings: which level of the computer player (`ruleset.ai`) plays the seats
of absent players (and of computer players), how long the `hard` level searches, and how long an
end of turn waits for its search.

The `[stand_in]` table of the configuration file (`server.config.file`) gives them; the server
applies them to every game it runs (`server.game.stand_in`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ruleset.ai import DEFAULT_ITERATIONS, DEFAULT_SECONDS, Level, parse_level

DEFAULT_HARD_BUDGET = DEFAULT_ITERATIONS  # playouts per decision: about a quarter of a second
DEFAULT_HARD_SECONDS = DEFAULT_SECONDS  # the longest one hard decision searches
DEFAULT_HARD_WAIT = 2.0  # seconds an end of turn waits at most for a hard decision


@dataclass(frozen=True)
class StandInSettings:
    level: Level = Level.NORMAL
    hard_budget: int = DEFAULT_HARD_BUDGET
    hard_wait: float = DEFAULT_HARD_WAIT
    hard_seconds: float = DEFAULT_HARD_SECONDS

    @classmethod
    def parse(
        cls,
        level: str | None,
        hard_budget: int | None,
        hard_wait: float | None,
        hard_seconds: float | None = None,
    ) -> StandInSettings:
        """Settings from the table's values (None: the default); ValueError with a one-line reason."""
        settings = cls()
        if level is not None:
            try:
                chosen = parse_level(level)
            except ValueError as error:
                raise ValueError(f"level: {error}") from None
            settings = replace(settings, level=chosen)
        if hard_budget is not None:
            if hard_budget < 1:
                raise ValueError(f"hard_budget: expected at least 1 playout, not {hard_budget}")
            settings = replace(settings, hard_budget=hard_budget)
        if hard_wait is not None:
            if not 0.1 <= hard_wait <= 60:
                raise ValueError(f"hard_wait: expected 0.1 to 60 seconds, not {hard_wait}")
            settings = replace(settings, hard_wait=float(hard_wait))
        if hard_seconds is not None:
            if not 0.05 <= hard_seconds <= 60:
                raise ValueError(f"hard_seconds: expected 0.05 to 60 seconds, not {hard_seconds}")
            settings = replace(settings, hard_seconds=float(hard_seconds))
        return settings
