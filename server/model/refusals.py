"""Why the server says no: one exception for every refused request, and the server's own problems.

Every write of `server.game.game.Game` either succeeds or fails with `Refused(problem)`, whose
`Problem` (a `ruleset.ProblemCode` and a text for the player) comes from the ruleset's order
checks or from the list below (accounts, slots, removed players). Readers of the failure
(the TP session's error map, the web pages, the JSON API, the admin interface) turn it into
their own answer in one place each; nothing passes `(value, Problem)` tuples around.
"""

from __future__ import annotations

from twisted.internet import defer

from ruleset import Problem, ProblemCode


class Refused(Exception):
    """A request the game did not carry out; nothing of it was stored."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem

    @property
    def code(self) -> ProblemCode:
        return self.problem.code

    @property
    def message(self) -> str:
        return self.problem.message


MAX_NAME = 64
MAX_PASSWORD = 1024

ACCOUNT_EXISTS = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "An account with that name already exists.")
# Joining a game with an account of the server (one per server) whose password is not this one:
# counted by the login brake as a wrong password is.
WRONG_ACCOUNT_PASSWORD = Problem(
    ProblemCode.UNAVAILABLE_PERMANENTLY,
    "An account with that name exists on this server: give its password to join this game with it,"
    " or choose another name.",
)
NO_SUCH_ACCOUNT = Problem(ProblemCode.NO_SUCH_THING, "No account with that name on this server.")
GAME_FULL = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game has no room for more players.")
GAME_ENDED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game is over.")
CREATION_DISABLED = Problem(ProblemCode.PERMISSION_DENIED, "This game does not allow creating accounts.")
BAD_NAME = Problem(
    ProblemCode.FRAME,
    f"A user name must be 1 to {MAX_NAME} letters, digits or symbols, without spaces and without '@'.",
)
POOL_EXHAUSTED = Problem(
    ProblemCode.UNAVAILABLE_PERMANENTLY,
    "This game cannot take more players: its colonist pool is too small to deal a new player a hand.",
)


def looks_like(existing: str) -> Problem:
    """A new name that is, or looks like, an existing player's (a look-alike character)."""
    return Problem(
        ProblemCode.UNAVAILABLE_PERMANENTLY,
        f"That name looks like the existing player name {clipped(existing, 64)}; choose another.",
    )


BAD_LOGIN = Problem(ProblemCode.FRAME, "Login Error - bad username or password")
BAD_SLOT = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "No such slot in that order queue.")
REMOVED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "You have been removed from this game.")
# A login to an account an operator removed: not a wrong password, and not for ever (the
# operator can reinstate it), so Permission Denied rather than a Frame error.
REMOVED_LOGIN = Problem(
    ProblemCode.PERMISSION_DENIED,
    "Login Error - this account was removed from the game by its operator (who can reinstate it)",
)
NO_SUCH_PLAYER = Problem(ProblemCode.NO_SUCH_THING, "No player of that name in this game.")
NO_SUCH_MESSAGE = Problem(ProblemCode.NO_SUCH_THING, "No such message")

# Vacations and resignation (server.model.attendance).
RESIGNED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "You resigned from this game.")
NO_VACATIONS = Problem(ProblemCode.PERMISSION_DENIED, "This game has no vacations.")
NOT_ON_VACATION = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "You are not on vacation.")
# "I am back" from a player whose seat the stand-in does not play (nothing to take back).
NOT_AWAY = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY, "You play your own seat already: the stand-in does not play it."
)
CONFIRM_RESIGN = Problem(
    ProblemCode.FRAME, 'Resigning is for good: send {"confirm": true} to resign from this game.'
)

EMPTY_PASSWORD = Problem(ProblemCode.FRAME, "A password is needed.")
LONG_PASSWORD = Problem(ProblemCode.FRAME, f"A password can have at most {MAX_PASSWORD} characters.")
UNUSABLE_PASSWORD = Problem(
    ProblemCode.FRAME, "A password cannot contain control characters or unpaired surrogates."
)
TOO_MANY_FAILED_LOGINS = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY,
    "Too many failed logins from your address; wait a minute, then log in on a new connection.",
)
TOO_MANY_ACCOUNT_FAILURES = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY,
    "Too many failed logins on this account from elsewhere; log in from where you played before, "
    "or try again in a few minutes.",
)
TOO_MANY_PASSWORD_CHECKS = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY,
    "Too many password checks; try again in a few minutes (scripts: get a token once and use it).",
)
TOO_MANY_ACCOUNTS = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY,
    "Too many accounts created from your address; try again later.",
)
#: The refusals that say "later": HTTP answers them 429 with Retry-After.
RATE_LIMITED = (
    TOO_MANY_FAILED_LOGINS,
    TOO_MANY_ACCOUNT_FAILURES,
    TOO_MANY_PASSWORD_CHECKS,
    TOO_MANY_ACCOUNTS,
)


# While the store cannot keep the turn that ended (the game retries every few seconds).
TURN_NOT_STORED = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY,
    "The game's database is unavailable right now, so the turn that has ended cannot be stored "
    "yet; the next turn begins as soon as it is back. Try again shortly.",
)


def short_password(min_length: int) -> Problem:
    return Problem(ProblemCode.FRAME, f"A password must have at least {min_length} characters.")


def vacation_days(maximum: int) -> Problem:
    return Problem(ProblemCode.FRAME, f"A vacation lasts 1 to {maximum} whole days.")


def clipped(text: str, limit: int = 40) -> str:
    """Player text as a refusal may quote it: at most `limit` characters (then "…"), as a repr."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


#: The longest word a one-line message repeats whole (`clip_words`); a name, a path or a URL
#: someone typed is shorter, and a 5,000-character "name" is not echoed back whole.
LONGEST_ECHOED_WORD = 80


def clip_words(line: str, limit: int = LONGEST_ECHOED_WORD) -> str:
    """`line` with every word longer than `limit` characters cut to `limit` and "…": how a
    one-line message that may carry what a user typed (a name, a value) is written out."""
    return " ".join(word if len(word) <= limit else word[:limit] + "…" for word in line.split(" "))


def refuse(problem: Problem) -> defer.Deferred:
    """A Deferred that has failed with `Refused(problem)`: how a write says no."""
    return defer.fail(Refused(problem))


#: A player asked for a game against the computer on a server that offers none
#: (`computer_games_per_account` is 0, or a cluster node).
NO_COMPUTER_GAMES = Problem(
    ProblemCode.UNAVAILABLE_PERMANENTLY, "This server does not offer games against the computer."
)
