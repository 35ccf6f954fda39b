"""Board messages the ruleset posts (R26), with REF's subjects and bodies (ruleset.md §12)."""

from __future__ import annotations

from dataclasses import dataclass

from .kinds import SCORE_TITLES


@dataclass(frozen=True, slots=True)
class Message:
    """One message on one player's board. `turn` is the turn being processed when it was posted."""

    player: int
    turn: int
    subject: str
    body: str


COLONIZE_DONE = "Colonize fleet order complete"
COLONIZE_FAILED = "Colonize order failed"
MOVE_DONE = "Move fleet order complete"
MOVE_FAILED = "Move order failed"
ATTACK_DONE = "Attack fleet order complete"
ATTACK_FAILED = "Attack order failed"
REINFORCE_FAILED = "Reinforce order failed"
TURN_COMPLETE = "Turn complete"
TURN_ORDER = "Turn Order"
COMBAT = "COMBAT!"
COMBAT_COMPLETE = "Combat Complete!"
GAME_OVER = "GAME OVER!"
WELCOME = "Welcome"
NEW_PLAYER = "New Player"


def colonized(fleet: str, system: str) -> str:
    return f'You\'re fleet, "{fleet}" has colonized {system}.'


def colonize_not_a_system(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to colonize an object which is not a star system!'


def colonize_impossible(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to colonize a fleet which cannot be colonized!'


def colonize_too_many_regions(fleet: str) -> str:
    return (
        f'You\'re fleet, "{fleet}" tried to colonize a system which would join three or more regions '
        "with leaders!"
    )


def colonize_merges_pending_conflict(fleet: str) -> str:
    return (
        f'You\'re fleet, "{fleet}" tried to colonize a system which would merge a region '
        "whose leader is in a pending conflict!"
    )


def moved(fleet: str, system: str) -> str:
    return f'You\'re fleet, "{fleet}" has moved to {system}.'


def move_not_a_system(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to move to an object which is not a star system!'


def move_invalid_system(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to move to an invalid system!'


def move_joins_regions(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to occupy a system which would join two or more regions!'


def move_no_science(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to move to a system which does not border a science colony!'


def move_into_conflict(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to move into a region whose leader is in a pending conflict!'


def destroyed(fleet: str, system: str) -> str:
    return f'You\'re fleet, "{fleet}" has destroyed {system}.'


def attack_not_a_system(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" tried to attack an object which is not a star system!'


def attack_impossible(fleet: str, system: str) -> str:
    return (
        f'You\'re fleet, "{fleet}" tried to attack {system}, which is destroyed, carries an '
        "alien artifact or is a pending unification system!"
    )


def reinforce_impossible(fleet: str) -> str:
    return f'You\'re fleet, "{fleet}" could not reinforce: it is not part of the conflict!'


def score_report(scores: tuple[int, ...]) -> str:
    lines = "\n".join(f"{title}: {value}" for title, value in zip(SCORE_TITLES, scores))
    return "Your Current Score: \n" + lines


def turn_order(names: list[str]) -> str:
    return "The order for the next turn is: " + "".join(name + " " for name in names)


def combat_starts(internal: bool, attacker: str, a: int, defender: str, d: int) -> str:
    which = "INTERNAL" if internal else "EXTERNAL"
    return (
        f"The next turn is an {which} combat turn! Combatants are:  {attacker} with an initial "
        f"strength of {a} and {defender} with an initial strength of {d}"
    )


def battle_won(winner: str, strength: int) -> str:
    return f"{winner} has won the battle with a strength of {strength}!"


def game_over(winners: list[str], winning_score: int, own_score: int) -> str:
    if len(winners) == 1:
        who = f"{winners[0]} has"
    else:
        who = ", ".join(winners[:-1]) + f" and {winners[-1]} have"
    return (
        f"{who} won the game with a score of {winning_score}!  Your final score after "
        f"distributing your alien artifacts was: {own_score}"
    )


def welcome(server: str) -> str:
    return (
        f"Welcome to Thousand Parsec!\nThis server is running on {server}.  Please report any "
        "problems and enjoy the game."
    )


def new_player(name: str) -> str:
    return f"New player {name} has joined the game."
