"""Root test configuration.

Its presence puts `tests/` on `sys.path` (pytest's default `prepend` import mode), so test modules
in any folder can import the shared helpers in `tests/support/`.
"""
