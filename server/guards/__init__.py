"""What keeps one client from taking too much: address keys, token buckets, the login guard
and the log of failed logins."""
