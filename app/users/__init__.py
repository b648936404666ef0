"""Portal users: authentication, web sessions, sign-in throttling and the acting user."""
