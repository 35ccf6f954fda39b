"""The Thousand Parsec listener: connections, sessions, Fail mapping, mDNS advertisement."""
