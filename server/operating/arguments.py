"""The types of the operator commands' arguments: each reads what an operator typed, checks its
bounds and says, in one line, why it refuses a value.

Every channel hands an argument's words to the same type (`tae-server` on the command line,
tpadmin-cpp's string parameters, the operator requests a running server reads back from the
database), so a value is accepted or refused the same way everywhere, with the same words.
`parse` reads text; `check` takes a value as it is stored in an operator request (JSON) and
checks it again, so a request queued by another version cannot slip past the bounds.

The bounds: a duration is at most a year (`LONGEST_DURATION_S`), far inside what a deadline
may be (`server.model.timer_settings.LONGEST_WAIT_S`, what TimeRemaining carries); a number is
at most `LARGEST_NUMBER`, what a TP u32/j32 field and a database integer both hold. A value
tpadmin-cpp would send wrapped (it reads "-5" as the unsigned 4294967291) reaches these types as
the text the operator typed, because every admin parameter is a string.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Protocol

from server.model.durations import DURATION_EXAMPLES, duration_seconds
from server.model.refusals import MAX_NAME, clipped
from server.model.timer_settings import LONGEST_WAIT_S
from server.operating.game_actions import OperationError

#: The longest duration an operator may give (an extension, a turn length): a year and a day.
LONGEST_DURATION_S = 366 * 86400
#: The largest whole number an operator may give: a signed 32-bit integer's, which TP frames
#: (u32, j32) and every database's INTEGER carry.
LARGEST_NUMBER = 2**31 - 1
#: The longest game name.
MAX_GAME_NAME = 200
#: The longest free text (a schedule, a time zone, an e-mail address, a comment).
MAX_TEXT = 1000
#: Typing this instead of a game's name means the server's default game.
DEFAULT_GAME = "-"

assert LONGEST_DURATION_S <= LONGEST_WAIT_S


class ArgumentRefused(OperationError):
    """A value an argument does not take; the message names the argument and the value. On the
    command line it is a mistake in the command (exit status 2), elsewhere a refused command."""


class ArgumentType(Protocol):
    """What every argument type offers."""

    @property
    def metavar(self) -> str:
        """How the command line's help shows the value: DURATION, NAME, ..."""

    def parse(self, text: str) -> Any:
        """The value of the words an operator typed; ArgumentRefused if they are not one."""

    def check(self, value: Any) -> Any:
        """A value as stored in an operator request, checked again; ArgumentRefused if not."""

    def describe(self) -> str:
        """What the argument takes, in a few words, for help texts."""


def _shown(value: Any) -> str:
    """A refused value as the refusal quotes it: what was typed, cut short when long."""
    return clipped(value if isinstance(value, str) else str(value))


# -- durations ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Duration:
    """A length of time: seconds, or with units ("90m", "4h", "1d", "1h30m"); whole seconds
    from `minimum` (0, or 1 where nothing would happen) to a year."""

    label: str  # how the refusal names it: "the extension", "turn_length"
    minimum: int = 0
    metavar: str = "DURATION"

    def parse(self, text: str) -> int:
        words = text.strip()
        negative = words.startswith("-")
        seconds = duration_seconds(words[1:] if negative else words)
        if seconds is None:
            raise ArgumentRefused(
                f"{self.label} must be a duration like {DURATION_EXAMPLES}, not {_shown(text)}"
            )
        return self._bounded(-seconds if negative else seconds, text)

    def check(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ArgumentRefused(f"{self.label} must be a number of seconds, not {_shown(value)}")
        return self._bounded(value, value)

    def _bounded(self, seconds: float, shown: Any) -> int:
        if seconds < 0 or (self.minimum > 0 and seconds < self.minimum):
            if self.minimum > 0:
                raise ArgumentRefused(f"{self.label} must be longer than 0 s, not {_shown(shown)}")
            raise ArgumentRefused(f"{self.label} cannot be negative, not {_shown(shown)}")
        if seconds > LONGEST_DURATION_S:
            raise ArgumentRefused(f"{self.label} must be at most a year (366 d), not {_shown(shown)}")
        return int(round(seconds))

    def describe(self) -> str:
        least = "more than 0 s" if self.minimum else "0 or more"
        return f"a duration ({DURATION_EXAMPLES}), {least}, at most a year"


# -- numbers, switches, choices ----------------------------------------------------------------

_WHOLE = re.compile(r"-?[0-9]+", re.ASCII)


@dataclass(frozen=True, slots=True)
class WholeNumber:
    """A whole number from `minimum` to `maximum`."""

    label: str
    minimum: int = 0
    maximum: int = LARGEST_NUMBER
    metavar: str = "N"

    def parse(self, text: str) -> int:
        words = text.strip()
        if not _WHOLE.fullmatch(words) or len(words) > 40:
            raise ArgumentRefused(f"{self.label} must be a whole number, not {_shown(text)}")
        return self._bounded(int(words), text)

    def check(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentRefused(f"{self.label} must be a whole number, not {_shown(value)}")
        return self._bounded(value, value)

    def _bounded(self, number: int, shown: Any) -> int:
        if number < 0 and self.minimum >= 0:
            raise ArgumentRefused(f"{self.label} cannot be negative, not {_shown(shown)}")
        if number < self.minimum:
            raise ArgumentRefused(f"{self.label} must be at least {self.minimum}, not {_shown(shown)}")
        if number > self.maximum:
            raise ArgumentRefused(f"{self.label} must be at most {self.maximum}, not {_shown(shown)}")
        return number

    def describe(self) -> str:
        if self.maximum == LARGEST_NUMBER:
            return f"a whole number, {self.minimum} or more"
        return f"a whole number from {self.minimum} to {self.maximum}"


YES = ("yes", "true", "on", "1")
NO = ("no", "false", "off", "0")


@dataclass(frozen=True, slots=True)
class YesNo:
    """yes or no (also true/false, on/off, 1/0)."""

    label: str
    metavar: str = "yes|no"

    def parse(self, text: str) -> bool:
        word = text.strip().lower()
        if word in YES:
            return True
        if word in NO:
            return False
        raise ArgumentRefused(f"{self.label} must be yes or no, not {_shown(text)}")

    def check(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        return self.parse(value) if isinstance(value, str) else self.parse(repr(value))

    def describe(self) -> str:
        return "yes or no"


@dataclass(frozen=True, slots=True)
class OneOf:
    """One word of a fixed list."""

    label: str
    choices: tuple[str, ...]
    metavar: str = "WORD"

    def parse(self, text: str) -> str:
        word = text.strip()
        if word not in self.choices:
            raise ArgumentRefused(
                f"{self.label} must be one of {', '.join(self.choices)}, not {_shown(text)}"
            )
        return word

    def check(self, value: Any) -> str:
        return self.parse(value if isinstance(value, str) else repr(value))

    def describe(self) -> str:
        return "one of " + ", ".join(self.choices)


# -- names and text ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    """Words taken as they are (what they mean is checked where they are used: a game's name
    by the games there are, a schedule by the calendar), within `longest` characters, on one
    line; `empty` says whether nothing at all is a value."""

    label: str
    longest: int = MAX_TEXT
    empty: bool = False
    metavar: str = "TEXT"

    def parse(self, text: str) -> str:
        if not text and not self.empty:
            raise ArgumentRefused(f"{self.label} cannot be empty")
        if len(text) > self.longest:
            raise ArgumentRefused(
                f"{self.label} must be at most {self.longest} characters, not {_shown(text)}"
            )
        if any(ch in text for ch in "\r\n\0"):
            raise ArgumentRefused(f"{self.label} must be one line, not {_shown(text)}")
        return text

    def check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ArgumentRefused(f"{self.label} must be text, not {_shown(value)}")
        return self.parse(value)

    def describe(self) -> str:
        return f"text, at most {self.longest} characters"


@dataclass(frozen=True, slots=True)
class NewGameName:
    """The name of a game to be made: 1 to `MAX_GAME_NAME` characters, no '@' (it separates
    the game in a login), no spaces around it, not the default game's '-'."""

    label: str = "the game's name"
    metavar: str = "NAME"

    def parse(self, text: str) -> str:
        if (
            not text
            or "@" in text
            or text.strip() != text
            or len(text) > MAX_GAME_NAME
            or text == DEFAULT_GAME
            or any(not ch.isprintable() for ch in text)
        ):
            raise ArgumentRefused(
                f"{_shown(text)} is not a usable game name (1 to {MAX_GAME_NAME} printable "
                "characters, no '@', no spaces around it, not '-')"
            )
        return text

    def check(self, value: Any) -> str:
        return self.parse(value if isinstance(value, str) else repr(value))

    def describe(self) -> str:
        return f"1 to {MAX_GAME_NAME} characters, no '@'"


#: A game the server has, by name ('-': the default game).
GAME = Text("the game's name", longest=MAX_GAME_NAME, metavar="GAME")
#: A player's user name (the game says whether it has one).
PLAYER = Text("the player's name", longest=MAX_NAME, metavar="NAME")
#: A password; the server's password policy is checked where it is hashed.
PASSWORD = Text("the password", metavar="PASSWORD", empty=True)
