"""The stand-in's settings: which level of the computer player (`ruleset.ai`) plays the seats
of absent players, and how long an end of turn waits for the `hard` level's search.

The `[stand_in]` table of the configuration file (`server.config.file`) gives them; the server
applies them to every game it runs (`server.game.stand_in`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ruleset.ai import Level, parse_level

DEFAULT_HARD_BUDGET = 200  # playouts per decision: about half a second on one core
DEFAULT_HARD_WAIT = 2.0  # seconds an end of turn waits at most for a hard decision


@dataclass(frozen=True)
class StandInSettings:
    level: Level = Level.NORMAL
    hard_budget: int = DEFAULT_HARD_BUDGET
    hard_wait: float = DEFAULT_HARD_WAIT

    @classmethod
    def parse(cls, level: str | None, hard_budget: int | None, hard_wait: float | None) -> StandInSettings:
        """Settings from the table's values (None: the default); ValueError with a one-line reason."""
        settings = cls()
        if level is not None:
            try:
                chosen = parse_level(level)
            except ValueError as error:
                raise ValueError(f"level: {error}") from None
            settings = cls(chosen, settings.hard_budget, settings.hard_wait)
        if hard_budget is not None:
            if hard_budget < 1:
                raise ValueError(f"hard_budget: expected at least 1 playout, not {hard_budget}")
            settings = cls(settings.level, hard_budget, settings.hard_wait)
        if hard_wait is not None:
            if not 0.1 <= hard_wait <= 60:
                raise ValueError(f"hard_wait: expected 0.1 to 60 seconds, not {hard_wait}")
            settings = cls(settings.level, settings.hard_budget, float(hard_wait))
        return settings
