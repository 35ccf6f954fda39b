"""The scenario tool: set up a TaE position from a TOML file, play turns from it, report the
result as JSON (shared/spec/scenario-format.md). Run it as `python -m ruleset.scenario FILE.toml`.

It is the one part of the ruleset that reads files and uses libraries beyond the standard one:
`schema` checks the file with msgspec, `__main__` is a click command. `setup`, `play` and
`result` are pure, like the rules they drive; `ruleset/` outside this package never imports it.
"""
