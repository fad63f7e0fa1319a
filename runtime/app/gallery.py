"""The gallery page (docs/gallery.md): every example scene with its picture.

Each bundled scene is rendered headless at its ``[scene] preview`` time (the moment `emberfx
render` shows without --frames) into docs/gallery/<scene>.png, GALLERY_WIDTH pixels wide at the
scene's aspect, and the page lists them with the description the scene file opens with.

    python -m emberfx.app.gallery docs/              # render every scene, write the page
    python -m emberfx.app.gallery docs/ --page-only  # the page alone (no GPU)
    python -m emberfx.app.gallery docs/ fountain     # render only the scenes named

Under each picture of a scene in ``PLAYERS`` is a link to its live player, a web page of the
scene (emberfx.web) that the docs build records into the site (app/gallery_players.py, run by
the mkdocs hook app/gallery_hook.py): the site's script docs/javascripts/gallery.js opens it in
an iframe on click. Scenes in ``NO_PLAYER`` say why they have none.

The page depends only on the scene files, so tests/test_docs_reference.py checks that the
committed page is current and that each picture exists at the size the page implies; the
pictures themselves come from the GPU and are checked by eye.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

from emberfx.core.errors import EmberError
from emberfx.model.scene import Scene, bundled_scenes, load_scene

__all__ = ["GALLERY_WIDTH", "NO_PLAYER", "PLAYERS", "PLAYERS_DIR", "gallery_page", "gallery_size",
           "player_uri", "render_picture", "write_gallery"]

PAGE = Path("gallery.md")
"""the page, relative to the docs folder"""
PICTURES = Path("gallery")
"""the pictures' folder, relative to the docs folder"""
GALLERY_WIDTH = 480
"""pixels: every picture is this wide, its height following the scene's [scene] size"""
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


def gallery_size(scene: Scene) -> tuple[int, int]:
    """The picture's (width, height): GALLERY_WIDTH wide at the scene's aspect, height even."""
    width, height = scene.settings.size
    return GALLERY_WIDTH, max(2, round(GALLERY_WIDTH * height / width / 2) * 2)


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


def gallery_page() -> str:
    """The page, as Markdown (no GPU: it reads the scene files only)."""
    lines = ["# Gallery", "",
             "Every example scene bundled with emberfx, at its preview time (`[scene] preview`), "
             f"rendered headless {GALLERY_WIDTH} pixels wide. Each is one command away:",
             "", "```sh", "emberfx run NAME                    # in a window",
             "emberfx render NAME --out NAME.png  # the picture at the preview time", "```", "",
             "This page and its pictures are written by `python -m emberfx.app.gallery docs/`.",
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
                  f"![{settings.name}]({PICTURES.as_posix()}/{name}.png)"
                  f"{{ width=\"{width}\" height=\"{height}\" loading=lazy }}", "",
                  player_line(name, scene), "",
                  description(path), "",
                  f"`scenes/{name}.toml`, at {settings.preview:g} s "
                  f"({settings.preview_steps()} steps): `emberfx render {name} --out "
                  f"{name}.png`", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_picture(path: Path, target: Path) -> tuple[int, int]:
    """Render the scene at ``path`` at its preview time into ``target`` (PNG, written whole or
    not at all); returns the picture's size."""
    from PIL import Image

    from emberfx.engine.engine import Engine

    scene = load_scene(path)
    size = gallery_size(scene)
    with Engine(scene, size=size) as engine:
        engine.step(scene.settings.preview_steps())
        image = engine.render()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        Image.fromarray(image, "RGBA").save(tmp, format="PNG", optimize=True)
        os.chmod(tmp, 0o644)   # mkstemp's file is private; a picture is not
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return size


def write_gallery(docs: Path, names: list[str] | None = None, pictures: bool = True) -> Path:
    """Render the pictures of ``names`` (every bundled scene when None) under ``docs`` unless
    ``pictures`` is False, and write the page; returns the page's path."""
    scenes = bundled_scenes()
    unknown = sorted(set(names or []) - set(scenes))
    if unknown:
        raise EmberError(f"gallery: no bundled scene {', '.join(map(repr, unknown))}; "
                         f"scenes: {', '.join(sorted(scenes))}")
    if pictures:
        for name in sorted(names or scenes):
            target = Path(docs) / PICTURES / f"{name}.png"
            width, height = render_picture(scenes[name], target)
            print(f"wrote {target} ({width}x{height})", flush=True)
    page = Path(docs) / PAGE
    page.write_text(gallery_page(), encoding="utf-8", newline="\n")
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emberfx.app.gallery",
        description="Render the gallery's pictures and write its page under DOCS.")
    parser.add_argument("docs", nargs="?", type=Path, default=Path("docs"),
                        help="the documentation folder (default: docs)")
    parser.add_argument("scenes", nargs="*", metavar="SCENE",
                        help="bundled scenes to render again (default: all)")
    parser.add_argument("--page-only", action="store_true",
                        help="write the page without rendering any picture")
    args = parser.parse_args(argv)
    try:
        print(f"wrote {write_gallery(args.docs, args.scenes or None, pictures=not args.page_only)}")
    except EmberError as exc:
        print(f"emberfx: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
