"""Disk usage and quotas on the clusters, for the dashboard and the API."""
