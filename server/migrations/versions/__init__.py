"""Alembic revisions (loaded by Alembic from their files, not imported as a package)."""
