"""The write side: `Game` (server.game.game) and its parts, a module each: accounts, seats,
the clock; the turn timer, password hashing, the directory of a server's games."""
