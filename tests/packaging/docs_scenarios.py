"""A scenario from its TOML text, as the docs' examples are read."""

from __future__ import annotations

from ruleset.scenario.schema import parse
from ruleset.scenario.setup import Scenario, set_up


def load(text: str) -> Scenario:
    return set_up(parse(text))
