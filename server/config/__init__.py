"""Configuration: the TOML file's schema and each section's settings, and the one-line
errors that name the key or the flag."""
