"""The test suite, a package tree: pytest imports it in importlib mode from the project root
(pyproject's `pythonpath = ["."]`), so test files keep plain names (tests/memory/test_intake.py
beside tests/dashboard/test_review.py) and support modules are imported as packages
(`from tests.graph.support import ...`, `from tests.fixtures.net import ...`)."""
