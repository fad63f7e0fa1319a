"""The gallery page (docs/gallery.md): every example scene with its picture and clip.

``emberfx gallery docs/`` (app/gallery_media.py) renders each bundled scene at its ``[scene]
preview`` time into docs/gallery/<scene>.png, GALLERY_WIDTH pixels wide at the scene's aspect,
and a short clip ending there into docs/gallery/clips/<scene>.mp4, CLIP_WIDTH pixels wide; the
page shows each clip, looping and muted, with the picture as its poster, and the description the
scene file opens with. Its top links the contact sheet, docs/gallery.png (app/contact_sheet.py).

Under each picture of a scene in ``PLAYERS`` is a link to its live player, a web page of the
scene (emberfx.web) that the docs build records into the site (app/gallery_players.py, run by
the mkdocs hook app/gallery_hook.py): the site's script docs/javascripts/gallery.js opens it in
an iframe on click. Scenes in ``NO_PLAYER`` say why they have none. The same hook makes the
clips' addresses relative to the built page (mkdocs rewrites the addresses of Markdown links and
images, not those of raw HTML).

The page depends only on the scene files, so tests/test_docs_reference.py checks that the
committed page is current and that each picture and clip exists at the size the page implies;
the pictures themselves come from the GPU and are checked by eye.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from emberfx.model.scene import Scene, bundled_scenes, load_scene

__all__ = ["CLIP_FPS", "CLIP_SECONDS", "CLIP_WIDTH", "CLIPS", "COMMAND", "GALLERY_WIDTH",
           "NO_PLAYER", "PLAYERS", "PLAYERS_DIR", "SHEET", "clip_size", "gallery_page",
           "gallery_size", "player_uri", "scaled_size", "write_gallery_page"]

PAGE = Path("gallery.md")
"""the page, relative to the docs folder"""
PICTURES = Path("gallery")
"""the pictures' folder, relative to the docs folder"""
CLIPS = PICTURES / "clips"
"""the clips' folder, relative to the docs folder"""
SHEET = Path("gallery.png")
"""the contact sheet, relative to the docs folder"""
COMMAND = "emberfx gallery docs/"
"""what writes the page, its pictures and clips (app/gallery_media.py)"""
GALLERY_WIDTH = 480
"""pixels: every picture is this wide, its height following the scene's [scene] size"""
CLIP_WIDTH = 320
"""pixels: every clip is this wide, its height following the scene's [scene] size"""
CLIP_SECONDS = 2.0
"""seconds: a clip's length, ending at the scene's preview time (or starting at the scene's
start where the preview comes earlier)"""
CLIP_FPS = 30
"""frames a second of a clip (every second step at 60 steps a second)"""
PLAYERS_DIR = "gallery/play"
"""the live players' folder, relative to the docs folder and to the built site"""
PLAYERS: dict[str, int] = {
    "dam_break": 120, "debris": 120, "drape": 150, "fireworks": 150, "flag": 120,
    "fountain": 120, "life": 120, "life_rules": 120,
}
"""scene: the steps its live player records and loops. Short loops keep the docs build quick:
the build records them on its machine's GPU, a software one in CI."""
NO_PLAYER: dict[str, str] = {
    "campfire": "its gas takes about 200 passes a step: slow to record on the software GPU "
                "that builds this site",
    "explosion": "its gas takes about 200 passes a step: slow to record on the software GPU "
                 "that builds this site",
    "flock": "6,000 boids are slow to record on the software GPU that builds this site",
    "fountain_pool": "left out to keep the site's build short",
    "life_sparks": "left out to keep the site's build short",
    "generative": "its zooming Julia set is recomputed every frame: slow to record on the "
                  "software GPU that builds this site",
    "galaxy": "400,000 stars are slow to record on the software GPU that builds this site",
    "mandelbrot": "its deep zoom is slow to record on the software GPU that builds this site",
    "neon": "left out to keep the site's build short",
    "particle_life": "its page would hold about half a megabyte per second of loop",
    "plume": "its gas takes about 200 passes a step: slow to record on the software GPU that "
             "builds this site",
    "particle_life_3d": "its page would hold about half a megabyte per second of loop",
    "rain": "its page would hold about a quarter of a megabyte per second of loop",
    "sampler": "it is slow to record on the software GPU that builds this site",
    "sand": "4,000 colliding grains are slow to record on the software GPU that builds this site",
    "sdf": "its volume textures make a page of several megabytes",
    "smoke": "its gas takes about 200 passes a step: slow to record on the software GPU that "
             "builds this site",
    "shed": "its page would hold about half a megabyte per second of loop",
    "sparks": "left out to keep the site's build short",
    "swirl": "left out to keep the site's build short",
    "trails": "left out to keep the site's build short",
    "showcase": "it is slow to record on the software GPU that builds this site; the home page "
                "shows its video",
}
"""scene: why its gallery entry has no live player (shown on the page)"""


def scaled_size(size: tuple[int, int], width: int) -> tuple[int, int]:
    """``width`` wide at the aspect of ``size``, the height even (H.264 needs even sizes)."""
    return width, max(2, round(width * size[1] / size[0] / 2) * 2)


def gallery_size(scene: Scene) -> tuple[int, int]:
    """The picture's (width, height): GALLERY_WIDTH wide at the scene's aspect, height even."""
    return scaled_size(scene.settings.size, GALLERY_WIDTH)


def clip_size(scene: Scene) -> tuple[int, int]:
    """The clip's (width, height): CLIP_WIDTH wide at the scene's aspect, height even."""
    return scaled_size(scene.settings.size, CLIP_WIDTH)


def description(path: Path) -> str:
    """The comment a scene file opens with, as one paragraph (references to how a scene was
    first made, '(seed 003)', left out)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines)
    text = re.sub(r"\s*\([^()]*\bseed 0\d\d\b[^()]*\)", "", text)
    return text.replace("<", "&lt;")


def player_uri(name: str) -> str:
    """Where the live player of scene ``name`` is, relative to the docs folder and the site."""
    return f"{PLAYERS_DIR}/{name}.html"


def player_line(name: str, scene: Scene) -> str:
    """The line under a picture: the link to its live player, or why it has none."""
    from emberfx.web import player_frame

    if name not in PLAYERS:
        return (f"No live player here: {NO_PLAYER[name]}. `emberfx web {name} --out "
                f"{name}.html` writes one.")
    width, height = player_frame(gallery_size(scene))
    seconds = PLAYERS[name] * scene.settings.fixed_dt
    return (f"[Play live: the first {seconds:g} s, looped, on your GPU (WebGPU)]"
            f"({player_uri(name)}){{ .emberfx-play data-width=\"{width}\" "
            f"data-height=\"{height}\" }}")


def video_tag(name: str, title: str, width: int, height: int) -> str:
    """The clip of scene ``name``, muted and looping, with its picture as the poster (addresses
    relative to the docs folder; the mkdocs hook app/gallery_hook.py makes them relative to
    the built page)."""
    clip, poster = f"{CLIPS.as_posix()}/{name}.mp4", f"{PICTURES.as_posix()}/{name}.png"
    return (f'<video src="{clip}" poster="{poster}" width="{width}" height="{height}" '
            f'title="{html.escape(title)}" muted loop autoplay playsinline></video>')


def gallery_page() -> str:
    """The page, as Markdown (no GPU: it reads the scene files only)."""
    lines = ["# Gallery", "",
             "Every example scene bundled with emberfx, at its preview time (`[scene] preview`), "
             f"rendered headless {GALLERY_WIDTH} pixels wide. Each is one command away:",
             "", "```sh", "emberfx run NAME                    # in a window",
             "emberfx render NAME --out NAME.png  # the picture at the preview time", "```", "",
             f"This page, its pictures and clips are written by `{COMMAND}`. Each clip shows "
             f"the {CLIP_SECONDS:g} s up to the preview time (the first {CLIP_SECONDS:g} s where "
             f"the preview comes earlier), {CLIP_WIDTH} pixels wide at {CLIP_FPS} frames a "
             "second. All the pictures on one sheet: "
             f"[{SHEET.as_posix()}]({SHEET.as_posix()}).",
             "",
             "Most scenes also play live: the link under the picture opens the scene as a web "
             "page ([`emberfx web`](guides/web.md)) that runs its own WGSL on your GPU with "
             "WebGPU; drag to orbit, shift-drag to pan, wheel to zoom. Where the browser has "
             "no WebGPU the player shows its last frame. The players are recorded when the site "
             "is built.",
             ""]
    for name, path in sorted(bundled_scenes().items()):
        scene = load_scene(path)
        width, height = gallery_size(scene)
        settings = scene.settings
        lines += [f"## {settings.name}", "",
                  video_tag(name, settings.name, width, height), "",
                  player_line(name, scene), "",
                  description(path), "",
                  f"`scenes/{name}.toml`, at {settings.preview:g} s "
                  f"({settings.preview_steps()} steps): `emberfx render {name} --out "
                  f"{name}.png`", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_gallery_page(docs: Path) -> Path:
    """Write the page under ``docs`` (no GPU); returns its path."""
    page = Path(docs) / PAGE
    page.write_text(gallery_page(), encoding="utf-8", newline="\n")
    return page
