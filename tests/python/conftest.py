# The Python module's tests (pytest; run by ctest as python.*). The module comes from
# PYTHONPATH (ctest sets <build>/python), the CLI from ZOTRAIN_CLI.
import os
import subprocess

import numpy as np
import pytest

import zotrain


def pytest_configure(config):
    os.environ.setdefault(
        "ZOTRAIN_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "data"))


def require_data(name):
    """Skips the test when a data set is missing, or fails it under ZOTRAIN_REQUIRE_DATA=1 (CI)."""
    try:
        zotrain.data_dir(name)
    except zotrain.InputError as e:
        if os.environ.get("ZOTRAIN_REQUIRE_DATA"):
            pytest.fail(f"data set {name} missing: {e}")
        pytest.skip(f"data set {name} is not installed (run scripts/setup.sh)")


def quadrants(n, seed):
    """A learnable image set: 4 classes, each a bright 14x14 quadrant over noise (uint8)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    x = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
    for i, c in enumerate(y):
        r, q = divmod(int(c), 2)
        x[i, 14 * r:14 * r + 14, 14 * q:14 * q + 14] += 150
    return x, y


@pytest.fixture
def arrays():
    return {"train": quadrants(512, 1), "val": quadrants(128, 2), "test": quadrants(256, 3)}


@pytest.fixture
def cli():
    path = os.environ.get("ZOTRAIN_CLI")
    if not path:
        pytest.skip("ZOTRAIN_CLI is not set (ctest sets it)")

    def run(*args):
        return subprocess.run([path, *args], check=True, capture_output=True, text=True).stdout

    return run
