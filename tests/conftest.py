"""Shared fixtures. GPU tests run for real on whatever adapter emberfx picks (lavapipe in CI).

With EMBERFX_REQUIRE_GPU=1 (CI sets it) a missing adapter fails the GPU tests instead of skipping
them, so a broken driver install cannot turn CI green by skipping everything.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"


@pytest.fixture(scope="session")
def gpu():
    """The shared GPU context; skips (or fails under EMBERFX_REQUIRE_GPU=1) without an adapter."""
    from emberfx.core.errors import NoAdapterError
    from emberfx.core.gpu import get_context

    try:
        return get_context()
    except NoAdapterError as exc:
        if os.environ.get("EMBERFX_REQUIRE_GPU") == "1":
            pytest.fail(f"EMBERFX_REQUIRE_GPU=1 but no adapter: {exc}")
        pytest.skip(f"no GPU adapter: {exc}")


@pytest.fixture
def scenes_dir() -> Path:
    return SCENES


@pytest.fixture
def small_disk(tmp_path):
    """A 200 KiB tmpfs for disk-full tests (needs root and permission to mount; skipped
    otherwise: the writers' ffmpeg-failure tests cover the same path without a mount)."""
    import shutil
    import subprocess

    folder = tmp_path / "disk"
    folder.mkdir()
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root and the mount command")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def full_disk(small_disk):
    """The 200 KiB tmpfs of small_disk, filled up."""
    with open(small_disk / "filler", "wb", buffering=0) as filler:
        try:
            for _ in range(64):
                filler.write(bytes(4096))
        except OSError:   # ENOSPC: full
            pass
    return small_disk
