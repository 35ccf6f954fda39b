"""Tests of the protocol package: layouts pinned to the spec, captures, round trips, fuzzing."""
