"""The values every part of the server shares: a game's setup and stored records, its
snapshots, who plays each seat, the timer settings, refusals. Nothing here imports the
rest of the server."""
