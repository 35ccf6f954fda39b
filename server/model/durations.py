"""Durations as people write them: "90m", "4h", "1d", "1h30m", "45s", "1.5h" or "3600".

One reader for every place that takes a length of time: the operator command table's
`Duration` (the command line, the admin protocol, the desk; `server.operating.arguments`) and
the configuration file's `[game]` lengths (`server.config.file`), so that `turn_length = "1d"`
in TOML and `--turn-length 1d` read the same.
"""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([dhms]?)", re.IGNORECASE | re.ASCII)
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1, "": 1}
DURATION_EXAMPLES = "90m, 2h, 1d, 1h30m or 3600"


def duration_seconds(text: str) -> float | None:
    """The seconds of "90m", "2h", "1d", "1h30m", "45s", "1.5h" or "3600" (spaces allowed
    between the parts); None when the text is no duration. No bounds: the caller has them."""
    compact = text.strip().replace(" ", "")
    if not compact or len(compact) > 64:
        return None
    position, total = 0, 0.0
    while position < len(compact):
        match = _DURATION_PART.match(compact, position)
        if match is None or match.end() == position:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2).lower()]
        position = match.end()
    return total
