"""Alembic migrations of the game database; run them with `server.database.upgrade(url)`.

`env.py` is Alembic's environment, `versions/` the revisions, oldest first. For a new revision
during development: `alembic -c server/migrations/alembic.ini revision -m "what changes"`.
"""
