"""ruleset package."""
