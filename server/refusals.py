"""Why the server says no: one exception for every refused request, and the server's own problems.

Every write of `server.game.Game` either succeeds or fails with `Refused(problem)`, whose
`Problem` (a `ruleset.ProblemCode` and a text for the player) comes from the ruleset's order
checks or from the list below (accounts, slots, removed players). Readers of the failure
(the TP session's error map, the web pages, the JSON API, the admin interface) turn it into
their own answer in one place each; nothing passes `(value, Problem)` tuples around.
"""

from __future__ import annotations

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

ACCOUNT_EXISTS = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "An account with that name already exists.")
GAME_FULL = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game has no room for more players.")
GAME_ENDED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game is over.")
CREATION_DISABLED = Problem(ProblemCode.PERMISSION_DENIED, "Account creation Disabled")  # tpserver-cpp
BAD_NAME = Problem(ProblemCode.FRAME, f"A user name must be 1 to {MAX_NAME} characters, without '@'.")
BAD_LOGIN = Problem(ProblemCode.FRAME, "Login Error - bad username or password")
BAD_SLOT = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "No such slot in that order queue.")
REMOVED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "You have been removed from this game.")
NO_SUCH_PLAYER = Problem(ProblemCode.NO_SUCH_THING, "No player of that name in this game.")
NO_SUCH_MESSAGE = Problem(ProblemCode.NO_SUCH_THING, "No such message")
