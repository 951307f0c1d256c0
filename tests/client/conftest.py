"""Fixtures for testing the `roam` client against fake_roamd.py on a private system bus.

The binary is $ROAM, or build/tui/roam of this tree."""
import os
import subprocess

import pytest

from fakebus import Bus, FakeRoamd, PYTHON, ROAM, run_roam  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def roam_binary():
    if not os.access(ROAM, os.X_OK):
        pytest.exit(f"{ROAM} is not built (meson setup build && ninja -C build, or set ROAM)",
                    returncode=1)
    if not os.access(PYTHON, os.X_OK):
        pytest.exit(f"{PYTHON} is missing", returncode=1)


@pytest.fixture
def bus(tmp_path):
    b = Bus(str(tmp_path))
    yield b
    b.close()


@pytest.fixture
def roamd(bus, tmp_path):
    """A factory: roamd(scenario) starts fake_roamd with it; stopped after the test."""
    fakes = []

    def start(scenario):
        fake = FakeRoamd(bus, str(tmp_path), scenario)
        fakes.append(fake)
        return fake

    yield start
    for fake in fakes:
        fake.close()


@pytest.fixture
def roam(bus):
    """roam(*args) runs the client against the private bus."""
    return lambda *args: run_roam(bus.env, *args)

