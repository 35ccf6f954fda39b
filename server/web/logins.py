"""Every password check of the web listener, through the server's one login brake.

A web login (the login form, HTTP Basic on the API), an account creation and a password change
each hash a password, so each goes through `server.guards.login_guard.LoginGuard`, the brake TP
logins go through: the same hashing slots (a flood on the web cannot hold up a TP login, nor
the reverse), the same budgets per address (the client's, behind a trusted proxy) and per
account, the same growing delays. On the web a *client* of the brake is one HTTP connection and
client address (`server.web.transport.GuardedChannel.login_client`): a fresh connection with the
right password is always tried, as a fresh TP connection is; a connection that failed too often
is closed after its answer.

HTTP Basic is verified once: a correct `Authorization` header is remembered (by an HMAC of it,
never the password) for `BASIC_KEPT_S` seconds, while the account's credential mark is the one
it was verified with, so a script sending the password with every request costs one hash, and
a password change ends it at once.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime

from server.guards.login_guard import GuardedClient, LoginGuard
from server.guards.rates import address_key
from server.model.refusals import BAD_LOGIN, WRONG_ACCOUNT_PASSWORD, Refused
from server.web.relay import client_address

#: How long a verified HTTP Basic header is taken without hashing again.
BASIC_KEPT_S = 300.0
#: What `check`, `remembered` and `remember` take as the game name for a login to the server's
#: account rather than to a seat of one game (`GET /api/me`): no game can be named so.
ACCOUNTS = "@accounts"
BASIC_KEPT = 4096


class WebLogins:
    def __init__(self, guard: LoginGuard, clock: IReactorTime, secret: bytes):
        self.guard = guard
        self.clock = clock
        self._secret = secret
        self._basic: OrderedDict[bytes, tuple[int | str, str, float]] = OrderedDict()

    def _client(self, request: Any) -> tuple[GuardedClient, bool]:
        """The brake's client for this request: its connection's (kept), or one of its own."""
        address = address_key(client_address(request))
        channel = getattr(request, "channel", None)
        login_client = getattr(channel, "login_client", None)
        if login_client is not None:
            found = login_client(address)
            if found is not None:
                return found, False
        return self.guard.client(address, "web"), True

    async def check(
        self,
        request: Any,
        game_name: str,
        username: str,
        run: Callable[[], Any],
        *,
        creating: bool = False,
        new_account: Callable[[Any], bool] = lambda result: True,
    ) -> Any:
        """Run the password check `run()` (a Deferred) when the brake lets it: its result, or
        the Refused of the brake or of the check (a wrong password answered after the brake's
        delay; a connection that must go is closed after this answer). A creation counts
        against the address's account creations when `new_account(result)`."""
        client, own = self._client(request)
        account = self.guard.account_key(f"{username[:200]}@{game_name}")
        try:
            try:
                ticket = await client.admit(username[:200], account=account, creating=creating)
            except Refused:
                self._close_after(request, client)
                raise
            try:
                result = await defer.maybeDeferred(run)
            except Refused as refused:
                delay = ticket.done(False, counts=refused.problem in (BAD_LOGIN, WRONG_ACCOUNT_PASSWORD))
                if delay > 0:
                    await task.deferLater(self.clock, delay, lambda: None)
                self._close_after(request, client)
                raise
            except BaseException:
                ticket.done(False, counts=False)
                raise
            ticket.done(True, new_account=new_account(result))
            return result
        finally:
            if own:
                client.lost()

    @staticmethod
    def _close_after(request: Any, client: GuardedClient) -> None:
        if client.must_close:
            request.setHeader(b"connection", b"close")
            channel = getattr(request, "channel", None)
            if channel is not None:
                channel.persistent = False

    # -- HTTP Basic, verified once ---------------------------------------------------------

    def _basic_key(self, game_name: str, header: bytes) -> bytes:
        return hmac.new(self._secret, b"basic|" + game_name.encode() + b"|" + header, hashlib.sha256).digest()

    def remembered(self, game_name: str, header: bytes, marks: Any) -> Any:
        """The player of an `Authorization: Basic` header verified lately, while their
        credential mark (`marks`: the snapshot's) is still the one it was verified with. For the
        server's accounts (`ACCOUNTS`) the player is the account's name."""
        key = self._basic_key(game_name, header)
        found = self._basic.get(key)
        if found is None:
            return None
        player, mark, until = found
        if until < self.clock.seconds() or not hmac.compare_digest(
            mark.encode(), str(marks.get(player, "")).encode()
        ):
            self._basic.pop(key, None)
            return None
        return player

    def remember(self, game_name: str, header: bytes, player: int | str, mark: str) -> None:
        key = self._basic_key(game_name, header)
        self._basic[key] = (player, mark, self.clock.seconds() + BASIC_KEPT_S)
        self._basic.move_to_end(key)
        while len(self._basic) > BASIC_KEPT:
            self._basic.popitem(last=False)
