"""A short, fixed-seed run of the fuzzer of the web and admin listeners (`python -m
tests.fuzz_web`): no answer 5xx and no admin internal error, no traceback or error in the
server's log, every /api/ refusal JSON, the server's memory flat, and a TP player and a web
player answered all along (their latency is measured by the
long runs, not asserted here: a test does not time a shared machine)."""

from __future__ import annotations

from tests.fuzz_web import run


def test_a_short_fuzz_run_finds_nothing():
    summary = run(seconds=15, seed=20261202, workers=3, memory_growth_mib=48, admin_workers=2)
    assert summary["requests_by_listener"]["web"] > 200, summary
    assert summary["requests_by_listener"]["admin"] > 100, summary
    admin_answers = {k: v for k, v in summary["statuses"].items() if k.startswith("admin ")}
    assert admin_answers.get("admin Okay") and admin_answers.get("admin Fail 1"), admin_answers
    assert summary["server_errors"] == 0, summary["server_error_examples"]
    assert summary["log_tracebacks_and_errors"] == 0, summary["log_examples"]
    assert summary["api_answers_not_json"] == 0, summary["not_json_examples"]
    assert summary["server_alive"] and summary["ok"], summary
    for name in ("tp", "web"):
        witness = summary["witnesses"][name]
        assert witness["answers"] > 50 and not witness["failures"], witness
