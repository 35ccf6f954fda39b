"""Posted forms, read by the pages themselves (twisted.web parses none: `server.web.transport`).

A form's body is bounded by its route (16 KiB) before it is read, so parsing it here takes well
under a millisecond; the number of fields is bounded too (`web_form_fields`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

FORM_FIELDS = "The form has too many fields (at most {limit})."
NOT_A_FORM = "Forms are sent as application/x-www-form-urlencoded, in UTF-8."


class FormError(ValueError):
    """A posted form that cannot be read: `status` and a text for the person."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


def form_fields(request: Any, max_fields: int | None = None) -> dict[str, str]:
    """The posted form (`application/x-www-form-urlencoded`, UTF-8), each field's first value;
    read once per request (the body is bounded by its route, so this takes well under a
    millisecond). FormError for anything else."""
    cached = getattr(request, "tae_form", None)
    if cached is not None:
        return dict(cached)
    if max_fields is None:
        guards = getattr(getattr(getattr(request, "channel", None), "site", None), "guards", None)
        max_fields = guards.limits.web_form_fields if guards is not None else 100
    content_type = (request.getHeader(b"content-type") or b"").split(b";")[0].strip().lower()
    body = b""
    if request.content is not None:
        request.content.seek(0)
        body = request.content.read()
        request.content.seek(0)
    if body and content_type != b"application/x-www-form-urlencoded":
        raise FormError(400, NOT_A_FORM)
    try:
        parsed = parse_qs(
            body.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=False,
            encoding="utf-8",
            errors="strict",
            max_num_fields=max_fields or None,
        )
    except UnicodeDecodeError:
        raise FormError(400, NOT_A_FORM) from None
    except ValueError:
        raise FormError(413, FORM_FIELDS.format(limit=max_fields)) from None
    fields = {key: values[0] if values else "" for key, values in parsed.items()}
    request.tae_form = fields
    return dict(fields)
