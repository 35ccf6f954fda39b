"""The operator's `[notifications]` settings: the SMTP relay, the reminder, retries, limits.

    [notifications]
    enabled = true                  # false: no events are queued and nothing is sent
    smtp_host = "localhost"         # the relay e-mail goes through ("" = no e-mail channels)
    smtp_port = 25
    smtp_from = "tae@example.org"   # the From: address
    smtp_starttls = false           # require STARTTLS before sending
    smtp_username = ""              # log in to the relay (with smtp_password) when set
    smtp_password = ""
    reminder_lead = 3600            # seconds before a deadline: "the turn ends soon" (0 = none)
    retry_base = 10                 # seconds before the first retry; doubled each time ...
    retry_cap = 3600                # ... up to this
    max_attempts = 12               # then the notification is given up (logged)
    request_timeout = 15            # seconds for one webhook request or one SMTP session
    max_channels = 4                # channels (webhooks + addresses) per player and game
    webhook_allow = []              # host names or networks webhooks may reach although they
                                    # are loopback, private or link-local ("10.1.0.0/16")
    public_url = ""                 # the web listener's address as players reach it, for the
                                    # link to the game in every message and the link that
                                    # confirms an e-mail address ("": the web listener's own)
    gather = 10                     # seconds a "turn started" waits: if everyone else finishes
                                    # meanwhile, the player gets one "waits only for you" instead

The table is read against `NotificationSettings` (msgspec): unknown keys and wrong types are
refused with a one-line error naming the key; `validate()` checks the ranges.
"""

from __future__ import annotations

import msgspec

from server.config.networks import parse_hosts_and_networks


class NotificationSettingsError(ValueError):
    """A setting out of range; the message names it (prefixed `notifications.` by the caller)."""


class NotificationSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The `[notifications]` section of the configuration and its schema."""

    enabled: bool = True
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_from: str = "tae@localhost"
    smtp_starttls: bool = False
    smtp_username: str = ""
    smtp_password: str = ""
    reminder_lead: float = 3600.0
    retry_base: float = 10.0
    retry_cap: float = 3600.0
    max_attempts: int = 12
    request_timeout: float = 15.0
    max_channels: int = 4
    webhook_allow: list[str] = msgspec.field(default_factory=list)
    public_url: str = ""
    gather: float = 10.0

    @property
    def email_enabled(self) -> bool:
        """E-mail channels work only with a relay to send them through."""
        return bool(self.smtp_host)

    def validate(self) -> NotificationSettings:
        if not 0 < self.smtp_port < 65536:
            raise NotificationSettingsError(f"smtp_port: {self.smtp_port} is not a TCP port")
        if self.smtp_host and "@" not in self.smtp_from:
            raise NotificationSettingsError(f"smtp_from: {self.smtp_from!r} is not an e-mail address")
        if bool(self.smtp_username) != bool(self.smtp_password):
            raise NotificationSettingsError("smtp_username and smtp_password go together")
        for name in ("reminder_lead", "retry_base", "retry_cap", "gather"):
            if getattr(self, name) < 0:
                raise NotificationSettingsError(f"{name} cannot be negative")
        if self.retry_cap < self.retry_base:
            raise NotificationSettingsError("retry_cap cannot be below retry_base")
        if self.max_attempts < 1:
            raise NotificationSettingsError("max_attempts must be at least 1")
        if self.request_timeout <= 0:
            raise NotificationSettingsError("request_timeout must be above 0")
        if not 0 <= self.max_channels <= 100:
            raise NotificationSettingsError("max_channels is 0 to 100")
        try:
            parse_hosts_and_networks(self.webhook_allow)
        except ValueError as error:
            raise NotificationSettingsError(f"webhook_allow: {error}") from None
        if self.public_url and not self.public_url.startswith(("http://", "https://")):
            raise NotificationSettingsError("public_url: an http:// or https:// address")
        return self

    def retry_delay(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failed attempt (1, 2, ...): exponential, capped."""
        return min(self.retry_cap, self.retry_base * (2 ** max(0, min(attempts - 1, 40))))
