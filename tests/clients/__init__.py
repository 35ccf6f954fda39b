"""Tests of the clients package: the sans-IO session, cache, game API and both transports."""
