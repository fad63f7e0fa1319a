"""What the two notebook tests share: the example notebook, its cells by tag, image decoding,
and when a missing tool skips a test.

The notebook tests need the notebook extra (and the browser test the browser extra and Debian's
chromium), which the README's test command does not install: there they skip. .ci/run installs
them and sets EMBERFX_REQUIRE_NOTEBOOK=1, which turns a missing tool into a failure, so CI
cannot go green by skipping them.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "emberfx.ipynb"
INSTALL = 'pip install -e ".[notebook,browser]"'


def require(*modules: str) -> None:
    """Skip (or fail under EMBERFX_REQUIRE_NOTEBOOK=1) when one of ``modules`` is missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"{', '.join(missing)} not installed ({INSTALL})")


def unavailable(reason: str) -> None:
    if os.environ.get("EMBERFX_REQUIRE_NOTEBOOK") == "1":
        pytest.fail(f"EMBERFX_REQUIRE_NOTEBOOK=1 but {reason}")
    pytest.skip(reason)


def outputs(notebook, tag: str) -> list[dict]:
    """The outputs of the one code cell tagged ``tag``."""
    cells = [c for c in notebook.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    return cells[0].get("outputs", [])


def data_of(notebook, tag: str, mimetype: str) -> list:
    """Every ``mimetype`` payload among the outputs of the cell tagged ``tag``."""
    return [o["data"][mimetype] for o in outputs(notebook, tag)
            if mimetype in o.get("data", {})]


def decode_image(data: bytes) -> np.ndarray:
    """A PNG or JPEG as an (h, w, 3) uint8 array."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def data_uri_bytes(html: str, kind: str) -> bytes:
    """The first base64 data URI of ``kind`` ("image", "video") in an HTML snippet."""
    match = re.search(rf"data:[^;'\"]*{kind}[^;'\"]*;base64,([A-Za-z0-9+/=\s]+)", html)
    assert match is not None, f"no {kind} data URI in {html[:200]!r}"
    return base64.b64decode(match.group(1))


def lit_fraction(rgb: np.ndarray, background=(0x10, 0x10, 0x14), margin: int = 40) -> float:
    """The share of pixels clearly brighter than the scene's background colour."""
    difference = rgb.astype(np.int32) - np.asarray(background, np.int32)
    return float((difference.max(axis=2) > margin).mean())
