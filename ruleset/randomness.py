"""Seeded randomness: one `random.Random` per (game seed, turn, purpose), never the global one.

The seed material goes through blake2b so that streams for neighbouring turns are unrelated and
the result does not depend on Python's per-process string hashing.
"""

import hashlib
import random
from _random import Random as _CoreRandom

_new_random = random.Random.__new__
_seed_core = _CoreRandom.seed


def game_rng(seed: int, turn: int, purpose: str = "") -> random.Random:
    """The random stream of one game turn (turn 0 is set-up), optionally for a named purpose."""
    material = f"tae:{seed}:{turn}:{purpose}".encode()
    digest = hashlib.blake2b(material, digest_size=16).digest()
    # `random.Random(n)`, without its Python-level seed(): a simulated game makes a hundred of
    # these, and seeding is most of their cost (tests/ruleset/test_randomness.py checks the
    # stream is random.Random(n)'s).
    rng = _new_random(random.Random)
    _seed_core(rng, int.from_bytes(digest, "big"))
    rng.gauss_next = None  # type: ignore[attr-defined]  # (random.Random.seed sets it so)
    return rng


def join_rng(seed: int, player: int) -> random.Random:
    """The random stream that draws the starting hand of the `player`-th player to join (R2, R3).

    Joining does not depend on the turn at which a player joins, so a replay that adds the
    player at another point of the order log deals the same hand.
    """
    return game_rng(seed, 0, f"join {player}")
