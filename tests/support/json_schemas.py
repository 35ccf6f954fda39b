"""Check a `--json` document of `tae-client` or `tae-server` against the JSON Schema its
`"schema"` names (`"tae-client/status/1"` → clients/schemas/status.1.json, `"tae-server/…"` →
server/cli/schemas/…), with every schema of both folders in one registry so that they may refer
to each other's `$defs` (`urn:tpserver-tae:tae-client/common/1#/$defs/error`)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

FOLDERS = {"tae-client": ("clients", "schemas"), "tae-server": ("server.cli", "schemas")}
URN = "urn:tpserver-tae:"


def schema_files() -> dict[str, Any]:
    """Every schema file of both programs, by its name ("tae-client/status/1")."""
    found = {}
    for program, (package, folder) in FOLDERS.items():
        for entry in resources.files(package).joinpath(folder).iterdir():
            if entry.name.endswith(".json"):
                command, version, _ = entry.name.rsplit(".", 2)
                found[f"{program}/{command}/{version}"] = json.loads(entry.read_text("utf-8"))
    return found


@cache
def _registry() -> Registry:
    pairs = [(URN + name, Resource.from_contents(schema)) for name, schema in schema_files().items()]
    return Registry().with_resources(pairs)


def check_document(document: Any) -> Any:
    """Raise jsonschema's ValidationError unless `document` follows the schema it names; return it."""
    assert isinstance(document, dict), f"a --json answer is an object, not {type(document).__name__}"
    name = document.get("schema")
    assert isinstance(name, str), f"no 'schema' in {document!r:.200}"
    schemas = schema_files()
    assert name in schemas, f"no schema file for {name!r}"
    validator = Draft202012Validator(schemas[name], registry=_registry())
    validator.validate(document)
    return document


def json_answer(stdout: str) -> Any:
    """The one JSON document a `--json` run printed, checked (`check_document`)."""
    return check_document(json.loads(stdout))
