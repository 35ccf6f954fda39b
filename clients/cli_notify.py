"""``tae-client notify``: where the server tells me that my turn is due (docs/notifications.md).

    tae-client notify show                              my channels and what the server offers
    tae-client notify webhook URL [--format discord]    add a webhook (json | discord | slack)
    tae-client notify email ADDRESS                     add an e-mail address
    tae-client notify test                              send a test notification to each channel
    tae-client notify off [CHANNEL]                     remove one channel (its number, URL or
                                                        address), or all of them

Channels live on the server, per game and account; the commands call the player's web API
(``clients.player_api``, the ``--web-url`` setting) with the TP account's name and password.
"""

from __future__ import annotations

from typing import Any

import click

from .cli_runtime import EXIT_USAGE, CliError, json_option, runtime, say, show

FORMATS = ("json", "discord", "slack")


def _render(console, listing: dict[str, Any]) -> None:
    channels = listing.get("channels", [])
    if not channels:
        console.print(
            "no notification channels: add one with `tae-client notify webhook URL` or `notify email`"
        )
    for channel in channels:
        console.print(f"{channel['id']:>4}  {channel['description']}", markup=False, highlight=False)
    offered = ", ".join(listing.get("formats", []))
    email = "e-mail too" if listing.get("email") else "no e-mail (the server has no SMTP relay)"
    console.print(
        f"the server offers webhooks ({offered}), {email}; at most {listing.get('max_channels')} channels",
        markup=False,
        highlight=False,
    )
    lead = listing.get("reminder_lead") or 0
    if lead:
        console.print(
            f"reminders come {int(lead) // 60} min before a deadline", markup=False, highlight=False
        )


@click.group("notify")
def notify() -> None:
    """Be told by webhook or e-mail when a turn starts, ends soon, waits for me, or the game ends."""


@notify.command("show")
@json_option
def notify_show(as_json):
    """List my notification channels."""
    run = runtime()
    show(run, as_json, run.player_api().call("GET", "notifications"), _render)


@notify.command("webhook")
@click.argument("url")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="json",
    show_default=True,
    help="The body: the event as JSON, or a message Discord or Slack webhooks take as they are.",
)
@json_option
def notify_webhook(url, fmt, as_json):
    """Add a webhook (an http:// or https:// URL that gets a JSON POST for every event)."""
    run = runtime()
    listing = run.player_api().call("PUT", "notifications", {"webhook": url, "format": fmt})
    say(run, as_json, listing, f"webhook ({fmt}) {url} added; {_count(listing)}")


@notify.command("email")
@click.argument("address")
@json_option
def notify_email(address, as_json):
    """Add an e-mail address."""
    run = runtime()
    listing = run.player_api().call("PUT", "notifications", {"email": address})
    say(run, as_json, listing, f"e-mail to {address} added; {_count(listing)}")


@notify.command("test")
@json_option
def notify_test(as_json):
    """Send a test notification to each of my channels."""
    run = runtime()
    answer = run.player_api().call("POST", "notifications/test", {})
    queued = int((answer or {}).get("queued", 0))
    text = f"a test notification is on its way to {queued} channel(s)" if queued else "no channels to test"
    say(run, as_json, answer, text)


@notify.command("off")
@click.argument("channel", required=False)
@json_option
def notify_off(channel, as_json):
    """Remove CHANNEL (its number in `notify show`, its URL or address), or every channel."""
    run = runtime()
    api = run.player_api()
    if channel is None:
        listing = api.call("DELETE", "notifications")
        say(run, as_json, listing, "every notification channel removed")
        return
    current = api.call("GET", "notifications") or {}
    found = _find(current.get("channels", []), channel)
    if found is None:
        raise CliError(EXIT_USAGE, f"no channel {channel!r}: `tae-client notify show` lists them")
    listing = api.call("DELETE", f"notifications/{found['id']}")
    say(run, as_json, listing, f"{found['description']} removed; {_count(listing)}")


def _find(channels: list[dict[str, Any]], wanted: str) -> dict[str, Any] | None:
    for channel in channels:
        if wanted == str(channel.get("id")) or wanted.strip() == channel.get("target"):
            return channel
    return None


def _count(listing: dict[str, Any] | None) -> str:
    channels = (listing or {}).get("channels", [])
    return f"{len(channels)} channel(s) in all"
