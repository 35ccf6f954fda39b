"""The OpenAPI 3.1 document of the JSON API (server/web/openapi.json): valid, served at
/api/openapi.json, naming every route the API answers and no other, and strict enough that the
check every API test runs on its answers (tests/support/openapi_check.py) can fail."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema import ValidationError
from openapi_spec_validator import validate

from server.web import api, notification_api, players
from server.web.routing import Router
from tests.support.openapi_check import check_api_answer, openapi_document

from .helpers import Client, world


def test_the_document_is_valid_openapi_3_1():
    document = openapi_document()
    validate(document)
    assert document["openapi"].startswith("3.1")


def test_the_api_serves_the_document():
    _, _, site = world()
    answer = Client(site).get("/api/openapi.json")
    assert answer.status == 200 and answer.header("content-type").startswith("application/json")
    assert answer.json() == openapi_document()


def test_every_route_of_the_api_is_in_the_document_and_nothing_else():
    router = Router()
    api.register(router, web=None)
    notification_api.register(router, web=None)
    players.register_api(router, web=None)
    answered = {(route.method.decode().lower(), route.pattern.pattern) for route in router.routes}
    described = set()
    for template, item in openapi_document()["paths"].items():
        sample = re.sub(r"\{[^}]+\}", "7", template)
        for method in item:
            if method == "parameters":
                continue
            route, _, _ = router.match(method.upper().encode(), sample)
            assert route is not None, f"{method.upper()} {template} is described but not answered"
            described.add((method, route.pattern.pattern))
    assert answered == described


def test_an_answer_outside_the_document_is_caught():
    _, _, site = world()
    client = Client(site)
    answer = client.get("/api/games/Nebula")  # checked on the way (tests/web/helpers.py)
    document = answer.json()
    wrong = dict(document, seconds_left="soon")
    with pytest.raises(ValidationError):
        check_api_answer("GET", "/api/games/Nebula", 200, "application/json", json.dumps(wrong).encode())
    with pytest.raises(AssertionError, match="not a documented answer|not documented"):
        check_api_answer("GET", "/api/games/Nebula", 200, "text/html", b"<p>")
    missing = {key: value for key, value in document.items() if key != "players"}
    with pytest.raises(ValidationError):
        check_api_answer("GET", "/api/games/Nebula", 200, "application/json", json.dumps(missing).encode())
