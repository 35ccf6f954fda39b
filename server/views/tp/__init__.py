"""The Thousand Parsec view of a game: universe, frames, modtimes, catalogues."""
