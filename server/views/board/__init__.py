"""The texts the server posts on players' boards when a seat or a setting changes."""
