"""A cluster node's settings: its name, the address the other nodes reach it at, its timings.

Given by `tae-server serve --node NAME --advertise HOST:PORT` and the `[cluster]` table of the
configuration file (`server.config.file`)::

    [cluster]
    node = "node-a"                  # this node's name, unique in the cluster
    advertise = "10.0.0.5:6923"      # where the other nodes reach this node's TP listener
    web_advertise = "10.0.0.5:8080"  # where they reach its web listener (default: the host of
                                     # `advertise` and the port of the first tcp web listener)
    poll_interval = 1.0              # seconds between claim rounds (heartbeat, orphans, claims)
    failover_timeout = 10.0          # a node silent this long is cut off (hung, or partitioned)
    relay_timeout = 30.0             # how long a relayed session waits for its game's new owner
    handover_timeout = 20.0          # how long a stopping node waits for a game to be quiet
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class ClusterSettingsError(ValueError):
    """A cluster setting that cannot work; the message names the setting."""


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 as [::1]:PORT) → (host, port); ValueError otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    node: str
    advertise: str
    web_advertise: str | None = None
    poll_interval: float = 1.0
    failover_timeout: float = 10.0
    relay_timeout: float = 30.0
    handover_timeout: float = 20.0

    def validate(self) -> ClusterSettings:
        if not NAME.match(self.node):
            raise ClusterSettingsError(
                f"cluster.node: {self.node!r}: not a node name (letters, digits, '.', '_', '-'; 100 at most)"
            )
        try:
            parse_address(self.advertise)
        except ValueError as error:
            raise ClusterSettingsError(f"cluster.advertise: {error}") from None
        if self.web_advertise is not None:
            try:
                parse_address(self.web_advertise)
            except ValueError as error:
                raise ClusterSettingsError(f"cluster.web_advertise: {error}") from None
        for name in ("poll_interval", "failover_timeout", "relay_timeout", "handover_timeout"):
            if getattr(self, name) <= 0:
                raise ClusterSettingsError(f"cluster.{name} must be positive")
        if self.failover_timeout < 2 * self.poll_interval:
            raise ClusterSettingsError(
                "cluster.failover_timeout must be at least twice cluster.poll_interval"
            )
        return self

    @property
    def relay_answer_timeout(self) -> float:
        """How long a relayed request waits for the owner's answer before the session gives the
        owner up and looks for the game's owner again: half of `failover_timeout`, so that a
        frozen owner is left about when its game moves, and well inside a TP client's own
        request timeout (libtpproto's 12 s with the default settings)."""
        return self.failover_timeout / 2

    @property
    def address(self) -> tuple[str, int]:
        return parse_address(self.advertise)
