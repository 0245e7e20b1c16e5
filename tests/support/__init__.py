"""What the test suites share: factory-boy factories for every model, and the fixture plugins
tests/conftest.py registers through `pytest_plugins`."""
