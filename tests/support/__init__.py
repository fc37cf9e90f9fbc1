"""Helpers shared by test packages (fake servers); importable because tests/ is on sys.path."""
