"""One self-contained HTML file that replays a recorded scene (web/record.py) with WebGPU.

Everything is inlined: the player (player.js), the trace as gzip-compressed JSON in base64
(the page inflates it with the browser's DecompressionStream), and a poster PNG shown where
WebGPU is missing. The page makes no network request, so it works from ``file://`` and from
any static server.
"""

from __future__ import annotations

import base64
import gzip
import html
import io
import json
from importlib import resources

import numpy as np

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>{title} · emberfx</title>
<style>
body {{ margin: 0; background: #16161a; color: #ddd; font: 13px system-ui, sans-serif; }}
main {{ display: inline-block; padding: 8px; }}
canvas, img {{ display: block; width: {w}px; height: {h}px; touch-action: none; }}
#poster {{ display: none; }}
.bar {{ margin-top: 6px; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }}
button {{ background: #2a2a33; color: #ddd; border: 1px solid #444; border-radius: 3px; }}
#status {{ color: #f88; }} #note, #frametime {{ color: #999; }}
</style></head>
<body><main>
<canvas id="view" width="{w}" height="{h}"></canvas>
<img id="poster" alt="{title}: a frame of the scene" src="data:image/png;base64,{poster}">
<div class="bar">
<button id="play">play / pause</button><button id="stepbtn">step</button>
<button id="restart">restart</button><button id="resetcam">scene camera</button>
<label>speed <input id="speed" type="range" min="0.25" max="4" step="0.25" value="1"></label>
<label><input id="loop" type="checkbox" checked> loop</label>
</div>
<div class="bar"><span id="frametime"></span></div>
<div class="bar"><span id="status">loading…</span><span id="note"></span></div>
<div class="bar" style="color:#777">drag: orbit · shift-drag: pan · wheel: zoom ·
{frames} recorded steps of {dt_ms:.2f} ms, looped</div>
</main>
<script id="emberfx-trace" type="application/octet-stream">{trace}</script>
<script>{player}</script>
</body></html>
"""


def png_bytes(image: np.ndarray) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image[..., :3])).save(out, format="PNG", optimize=True)
    return out.getvalue()


def page(recorded: dict) -> str:
    """The HTML of ``recorded`` (web/record.py's dict; its poster is the last frame)."""
    data = {k: v for k, v in recorded.items() if k != "poster"}
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    packed = gzip.compress(text.encode("utf-8"), 9, mtime=0)   # the same scene: the same page
    player = resources.files("emberfx.web").joinpath("player.js").read_text("utf-8")
    w, h = recorded["size"]
    return TEMPLATE.format(
        title=html.escape(recorded["scene"] or "scene"), w=w, h=h,
        poster=base64.b64encode(png_bytes(recorded["poster"])).decode("ascii"),
        frames=recorded["frames"], dt_ms=recorded["fixed_dt"] * 1000.0,
        trace=base64.b64encode(packed).decode("ascii"),
        player=player.replace("</script", "<\\/script"))
