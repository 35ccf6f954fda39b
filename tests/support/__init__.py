"""Helpers shared by the test suites: Deferred results, free ports, server processes."""
