"""server.views.deadline: the one rendering of a deadline (ISO 8601 with its offset and the
seconds left for documents; a date, a time and the time left for people)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from server.views.deadline import deadline_fields, deadline_iso, deadline_words, in_words, seconds_left

DEADLINE = datetime(2024, 5, 14, 18, 20, tzinfo=ZoneInfo("UTC")).timestamp()


def test_documents_carry_iso_8601_with_its_offset_beside_the_seconds_left():
    fields = deadline_fields(DEADLINE, DEADLINE - 3 * 3600 - 12 * 60)
    assert fields == {"deadline": "2024-05-14T18:20:00+00:00", "seconds_left": 11520}
    assert datetime.fromisoformat(fields["deadline"]).timestamp() == DEADLINE
    assert deadline_fields(None, DEADLINE) == {"deadline": None, "seconds_left": -1}
    assert seconds_left(DEADLINE, DEADLINE + 50) == 0  # a passed deadline is due now, never negative


def test_people_read_a_date_a_time_and_the_time_left():
    assert deadline_words(DEADLINE, DEADLINE - 11520) == "Tue 14 May 2024, 18:20 UTC (in 3 h 12 min)"
    berlin = deadline_words(DEADLINE, DEADLINE - 90, ZoneInfo("Europe/Berlin"))
    assert berlin == "Tue 14 May 2024, 20:20 CEST (in 1 min 30 s)"
    assert deadline_iso(DEADLINE, ZoneInfo("Asia/Kolkata")) == "2024-05-14T23:50:00+05:30"
    assert deadline_words(None, DEADLINE) == "no deadline"


def test_durations_in_words_as_the_pages_countdown_writes_them():
    # the same words as live.js's inWords: the browser goes on counting where the server left off
    assert [in_words(s) for s in (0, 45, 60, 750, 3600, 11520, 86400, 100800)] == [
        "0 s",
        "45 s",
        "1 min",
        "12 min 30 s",
        "1 h",
        "3 h 12 min",
        "1 d",
        "1 d 4 h",
    ]
