"""Shells on the clusters' login nodes in the browser, as the user."""
