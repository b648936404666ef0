"""Workflows: named graphs of steps submitted together with their dependencies."""
