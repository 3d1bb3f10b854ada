"""Tests of the Python runtime (run: python3 -m unittest discover -s python-runtime -p 'test_*.py' -t python-runtime)."""
