"""Version 1 of the JSON API. Breaking changes go to a new ``/api/v2`` beside it."""
