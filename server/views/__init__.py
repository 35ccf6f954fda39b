"""The read side: what each reader shows of a game, rendered only from `GameSnapshot`s.

* `universe` — the Thousand Parsec objects of a state (built once per state);
* `modtimes` — TP cache modtimes and the fingerprints that move them;
* `player_views` — what one player, or nobody (the public), may see (R27, `ruleset.visible_to`);
* `tp_frames`, `tp_games` — the TP frames of one player's view; `frame_cache` — their encoded
  bodies, kept per game across snapshots.

Nothing here imports the game service (`server.game.game`): a test enforces it. The web pages, the
JSON API, the notifications and the admin interface read the same snapshots.
"""
