"""Notifications: telling players by webhook or e-mail that their turn is due.

* `events`: what a player is told, built from a game's snapshot (with an idempotency key).
* `follower`: follows every running game's snapshots and times the reminders.
* `outbox`: hands events to the durable outbox (`server.database.notification_outbox`)
  without delaying the turn that caused them.
* `worker`: claims due outbox rows, sends them, retries with backoff, gives up after a limit.
* `delivery`: one webhook POST (twisted.web Agent) or one e-mail (twisted.mail SMTP).
* `channels`: what a webhook URL or an address must look like; the bodies of each format.
* `settings`: the operator's `[notifications]` section.
* `service`: all of it for one server (`Notifications`), and the players' channel changes.

docs/notifications.md describes it for players and operators.
"""

from server.config.notifications import NotificationSettings, NotificationSettingsError

__all__ = ["NotificationSettings", "NotificationSettingsError"]
