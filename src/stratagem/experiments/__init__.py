"""Experiments: tournaments, evolutionary runs, and the result store."""
