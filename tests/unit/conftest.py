"""The unit tier needs no JAX. When only this tier runs (`python -m pytest tests/unit`), JAX is kept out: any
import of it fails the test that made it, so a unit test that starts to need JAX is moved, not slowed."""

from __future__ import annotations

import sys

import pytest


class _NoJax:
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in ("jax", "jaxlib"):
            raise ImportError(f"the unit tier runs without JAX, but {name} was imported")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if items and all("/unit/" in str(item.path) for item in items):
        assert "jax" not in sys.modules, "a unit test module imports JAX when it is collected"
        sys.meta_path.insert(0, _NoJax())
