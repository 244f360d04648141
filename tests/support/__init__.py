"""What the tests share: real repositories, real stores, real processes, and one way to wait.

Tests take what they need as fixtures (tests/conftest.py hands these out) or import a helper
from here; nothing is imported from conftest.py.
"""
