"""Personal access tokens for the JSON API: minted once, stored hashed, scoped, revocable."""
