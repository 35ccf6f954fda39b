"""The JSON API of a player's notification channels (docs/notifications.md).

    GET    /api/games/NAME/notifications            the caller's channels, and what the server offers
    PUT    /api/games/NAME/notifications            {"webhook": URL, "format": "json"|"discord"|"slack"}
                                                    or {"email": ADDRESS}: add one (the same URL or
                                                    address again changes its format);
                                                    {"channels": [{"kind", "target", "format"}, ...]}:
                                                    replace them all ([] removes them all)
    DELETE /api/games/NAME/notifications            remove every channel
    DELETE /api/games/NAME/notifications/ID         remove one
    POST   /api/games/NAME/notifications/test       send a test notification to each channel

Authentication and errors as in `server.web.api`: HTTP Basic or Bearer; a refusal is
`{"error": {"code", "name", "message"}}` (a channel that cannot be used: 400; too many: 409;
a server without notifications: 409; the database away: 503).
"""

from __future__ import annotations

from typing import Any

from ruleset import Problem, ProblemCode
from server.model.refusals import Refused
from server.model.store import StoreError
from server.notifications.channels import EVENT_KINDS, WEBHOOK_FORMATS, ChannelError, TooManyChannels
from server.web.api import Api, answer, encode, error_document, json_fields, refusal
from server.web.notification_pages import confirmer, test_wait
from server.web.routing import HTTPFailure, Router
from server.web.website import WebSite

JSON = b"application/json; charset=utf-8"
NOT_OFFERED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This server sends no notifications.")
NO_SUCH_CHANNEL = Problem(ProblemCode.NO_SUCH_THING, "You have no channel with that id.")
BUSY = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "The server cannot reach its database; try again soon.")


def _bad(message: str, code: ProblemCode = ProblemCode.FRAME) -> HTTPFailure:
    return refusal(Problem(code, message))


class NotificationApi:
    def __init__(self, web: WebSite):
        self.web = web
        self.api = Api(web)

    def service(self):
        service = getattr(self.web, "notifications", None)
        if service is None or not service.settings.enabled:
            raise refusal(NOT_OFFERED)
        return service

    async def _caller(self, request, name: str):
        game = self.api.game(name)
        service = self.service()
        player = await self.api.caller(request, game)
        return game, service, player

    async def _listing(self, service, game_id: int, player: int) -> dict[str, Any]:
        channels = await service.channels(game_id, player)
        settings = service.settings
        return {
            "channels": [c.document() for c in channels],
            "formats": list(WEBHOOK_FORMATS),
            "email": settings.email_enabled,
            "max_channels": settings.max_channels,
            "events": list(EVENT_KINDS),
            "reminder_lead": settings.reminder_lead,
        }

    async def show(self, request, name: str) -> bytes:
        game, service, player = await self._caller(request, name)
        return answer(request, await self._listing(service, game.snapshot.game_id, player))

    async def put(self, request, name: str) -> bytes:
        game = self.api.game(name)
        fields = json_fields(request)
        service = self.service()
        player = await self.api.caller(request, game)
        game_id = game.snapshot.game_id
        try:
            if "channels" in fields:
                wanted = self._read_channels(fields["channels"], service)
                confirm = confirmer(self.web, request, game.snapshot, player)
                confirmed = {
                    c.target
                    for c in await service.channels(game_id, player)
                    if c.kind == "email" and c.format == "email"
                }
                await service.remove(game_id, player)
                for kind, target, fmt in wanted:
                    if kind == "email" and target in confirmed:
                        await service._add(game_id, player, "email", target, "email")  # stays confirmed
                    else:
                        await self._add(service, game_id, player, kind, target, fmt, confirm)
            elif isinstance(fields.get("webhook"), str):
                await service.add_webhook(game_id, player, fields["webhook"], _format(fields.get("format")))
            elif isinstance(fields.get("email"), str):
                await service.add_email(
                    game_id, player, fields["email"], confirmer(self.web, request, game.snapshot, player)
                )
            else:
                raise ChannelError('send {"webhook": URL}, {"email": ADDRESS} or {"channels": [...]}')
        except TooManyChannels as error:
            raise _bad(str(error), ProblemCode.UNAVAILABLE_PERMANENTLY) from None
        except ChannelError as error:
            raise _bad(str(error)) from None
        return answer(request, await self._listing(service, game_id, player))

    @staticmethod
    def _read_channels(value: Any, service) -> list[tuple[str, str, str]]:
        from server.notifications.channels import check_address, check_webhook

        if not isinstance(value, list):
            raise ChannelError("channels: a list of {kind, target, format}")
        if len(value) > service.settings.max_channels:
            raise TooManyChannels(
                f"at most {service.settings.max_channels} channels: the most this server allows"
            )
        wanted = []
        for item in value:
            if not isinstance(item, dict) or not isinstance(item.get("target"), str):
                raise ChannelError("each channel is {kind: webhook|email, target: URL or address, format}")
            kind = item.get("kind", "webhook")
            if kind == "webhook":
                url, fmt = check_webhook(item["target"], _format(item.get("format")), service.targets)
                wanted.append(("webhook", url, fmt))
            elif kind == "email":
                if not service.settings.email_enabled:
                    raise ChannelError("this server sends no e-mail (its operator set no SMTP relay)")
                wanted.append(("email", check_address(item["target"]), "email"))
            else:
                raise ChannelError(f"a channel is a webhook or an email, not {kind!r}")
        return wanted

    @staticmethod
    async def _add(service, game_id: int, player: int, kind: str, target: str, fmt: str, confirm) -> None:
        if kind == "webhook":
            await service.add_webhook(game_id, player, target, fmt)
        else:
            await service.add_email(game_id, player, target, confirm)

    async def delete_all(self, request, name: str) -> bytes:
        game, service, player = await self._caller(request, name)
        await service.remove(game.snapshot.game_id, player)
        return answer(request, await self._listing(service, game.snapshot.game_id, player))

    async def delete_one(self, request, name: str, channel: str) -> bytes:
        game, service, player = await self._caller(request, name)
        if not await service.remove(game.snapshot.game_id, player, int(channel)):
            raise refusal(NO_SUCH_CHANNEL)
        return answer(request, await self._listing(service, game.snapshot.game_id, player))

    async def test(self, request, name: str) -> bytes:
        game, service, player = await self._caller(request, name)
        json_fields(request)
        wait = test_wait(self.web, game.snapshot.game_id, player)
        if wait:
            problem = Problem(
                ProblemCode.UNAVAILABLE_TEMPORARILY,
                f"Too many test notifications; the next one in {wait} s.",
            )
            raise HTTPFailure(429, encode(error_document(problem)), JSON, {b"retry-after": b"%d" % wait})
        queued = await service.test(game.snapshot, player)
        request.setResponseCode(202)
        return answer(request, {"queued": queued})


def _format(value: Any) -> str:
    if value is None:
        return "json"
    if not isinstance(value, str):
        raise ChannelError(f"format: one of {', '.join(WEBHOOK_FORMATS)}")
    return value


def _guarded(handler):
    """Refusals and database trouble as JSON errors."""

    async def run(request, *parts):
        try:
            return await handler(request, *parts)
        except Refused as refused:
            raise refusal(refused.problem) from None
        except StoreError:
            raise HTTPFailure(503, encode(error_document(BUSY)), JSON) from None

    return run


def register(router: Router, web: WebSite) -> None:
    api = NotificationApi(web)
    routes = [
        ("GET", "/api/games/{name}/notifications", api.show),
        ("PUT", "/api/games/{name}/notifications", api.put),
        ("DELETE", "/api/games/{name}/notifications", api.delete_all),
        ("DELETE", "/api/games/{name}/notifications/{channel:int}", api.delete_one),
        ("POST", "/api/games/{name}/notifications/test", api.test),
    ]
    for method, pattern, handler in routes:
        router.add(method, pattern, _guarded(handler))
