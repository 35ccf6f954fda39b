"""Check an answer of the JSON API against the OpenAPI document (server/web/openapi.json): the
operation of its method and path, the response of its status (or the operation's `default`),
and its JSON body against that response's schema. Every test client of the API calls
`check_api_answer` for what it receives (tests/web/helpers.py, the integration tests' `Web`)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

BASE = "urn:tpserver-tae:openapi"


@cache
def openapi_document() -> dict[str, Any]:
    return json.loads(resources.files("server.web").joinpath("openapi.json").read_text("utf-8"))


@cache
def _operations() -> list[tuple[re.Pattern, str, str]]:
    """(path regex, method, the path template) of every operation."""
    found = []
    for template, item in openapi_document()["paths"].items():
        regex = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        for method in item:
            if method in ("get", "put", "post", "delete", "patch", "head"):
                found.append((re.compile(regex), method, template))
    return found


@cache
def _registry() -> Registry:
    return Registry().with_resource(BASE, DRAFT202012.create_resource(openapi_document()))


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


def check_api_answer(method: str, path: str, status: int, content_type: str | None, body: bytes) -> None:
    """AssertionError (or jsonschema's ValidationError) unless the answer is one the document
    describes. Paths outside /api/ and the event streams are not the API's."""
    path = path.split("?", 1)[0]
    if not path.startswith("/api/"):
        return
    method = method.lower()
    if method == "head":
        method = "get"
    candidates = [(m, t) for regex, m, t in _operations() if regex.match(path)]
    if not candidates:
        assert status == 404, f"{path} is not in the OpenAPI document but answered {status}"
        template, operation = None, None
    else:
        template = next((t for m, t in candidates if m == method), None)
        if template is None:
            assert status == 405, f"{method.upper()} {path}: not in the document but answered {status}"
            return
        operation = openapi_document()["paths"][template][method]
    if operation is None:
        return
    responses = operation["responses"]
    key = str(status) if str(status) in responses else "default"
    assert key in responses, f"{method.upper()} {template}: {status} is not a documented answer"
    content = responses[key].get("content")
    if not content:
        assert not body, f"{method.upper()} {template} {status}: a body the document does not describe"
        return
    kind = (content_type or "").split(";")[0].strip()
    assert kind in content, f"{method.upper()} {template} {status}: {kind!r} is not documented"
    schema = content[kind].get("schema")
    if schema is None:
        return
    pointer = _pointer("paths", template, method, "responses", key, "content", kind, "schema")
    validator = Draft202012Validator({"$ref": f"{BASE}#/{pointer}"}, registry=_registry())
    validator.validate(json.loads(body))


def checked(method: str, path: str, answer: Any) -> Any:
    """The JSON of a urllib answer (or HTTPError), checked against the document."""
    body = answer.read()
    check_api_answer(method, path, answer.status, answer.headers.get("content-type"), body)
    return json.loads(body) if body else None
