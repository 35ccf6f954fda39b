"""The game's random streams are `random.Random`'s, seeded from the game seed, turn and purpose."""

import hashlib
import random

from ruleset.randomness import game_rng, join_rng


def _reference(seed: int, turn: int, purpose: str = "") -> random.Random:
    digest = hashlib.blake2b(f"tae:{seed}:{turn}:{purpose}".encode(), digest_size=16).digest()
    return random.Random(int.from_bytes(digest, "big"))


def test_a_game_stream_is_random_Random_seeded_with_the_digest():
    for seed, turn, purpose in ((0, 0, ""), (7, 3, "player 2"), (2**40, 999, "stand-in 4")):
        ours, reference = game_rng(seed, turn, purpose), _reference(seed, turn, purpose)
        assert [ours.random() for _ in range(5)] == [reference.random() for _ in range(5)]
        assert ours.randrange(1000) == reference.randrange(1000)
        assert ours.gauss(0, 1) == reference.gauss(0, 1)  # (gauss keeps a second value between calls)
        assert ours.getstate() == reference.getstate()


def test_streams_differ_by_turn_and_purpose_and_the_join_stream_is_turn_zero():
    first = game_rng(1, 1).random()
    assert first != game_rng(1, 2).random()
    assert first != game_rng(1, 1, "player 1").random()
    assert join_rng(5, 2).random() == game_rng(5, 0, "join 2").random()
