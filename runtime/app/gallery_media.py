"""``emberfx gallery DIR``: the pictures people see first, written by one command.

Under DIR (the documentation folder, ``docs``) it writes, for every bundled scene (or the scenes
named):

- ``gallery/<scene>.png``: the scene at its ``[scene] preview`` time, GALLERY_WIDTH (480) pixels
  wide at the scene's aspect (app/gallery.py's ``gallery_size``);
- ``gallery/clips/<scene>.mp4``: the clip, CLIP_SECONDS (2 s) of the scene at CLIP_FPS (30)
  frames a second, CLIP_WIDTH (320) pixels wide, height even. The clip ends at the preview
  time, so its last frame is the picture (the page shows the picture as the clip's poster and
  the loop starts from it); a scene whose preview comes before 2 s shows its first 2 s. The
  frames are rendered at the picture's size in the same run (one simulation for both) and
  scaled down (Lanczos). At this size a clip is about 20 to 200 kB;
- for the showcase, the README's hero: ``showcase.png``, the preview at the scene's own
  ``[scene] size``, and ``showcase.mp4``, its whole shot (``[scene] duration``) at one frame a
  step, HERO_VIDEO_WIDTH (960) pixels wide, rendered at the scene's size and scaled down;

then, from the pictures in DIR (no second render), ``gallery.png``, the contact sheet
(app/contact_sheet.py), and the page ``gallery.md`` (app/gallery.py). ``--page-only`` renders
nothing and writes the sheet and the page from the pictures already there (no GPU);
``--no-clips`` renders the pictures alone. Every file is written whole or not at all, and a
scene's picture and clip appear together (atomic_files.OutputGroup). Videos go through the same
writer as ``emberfx render --out x.mp4`` (output.FrameWriter: H.264 through ffmpeg).

On a CPU adapter each scene's ``[cpu]`` preset applies, as for ``emberfx render``, unless
``--quality full``.

``python -m emberfx.gallery DIR ...`` is the same command.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from emberfx.app.atomic_files import OutputGroup
from emberfx.app.contact_sheet import write_contact_sheet
from emberfx.app.gallery import (
    CLIP_FPS,
    CLIP_SECONDS,
    CLIPS,
    PICTURES,
    SHEET,
    clip_size,
    gallery_size,
    scaled_size,
    write_gallery_page,
)
from emberfx.app.headless import QUALITIES, for_adapter
from emberfx.app.output import STOP_NOTICE, FrameWriter, Progress, default_fps
from emberfx.core.errors import EmberError
from emberfx.engine import interrupts
from emberfx.model.scene import Scene, bundled_scenes, load_scene
from emberfx.model.scene_fields import suggest

__all__ = ["HELP", "HERO", "HERO_VIDEO_WIDTH",
           "Take", "add_arguments", "clip_steps", "hero_take", "run", "scene_take",
           "shoot", "write_gallery"]

HELP = ("render the gallery under DIR: each bundled scene's picture and clip, the contact "
        "sheet, the page and the README's showcase picture and video")
HERO = "showcase"
"""the scene whose picture and video the README and the home page open with"""
HERO_VIDEO_WIDTH = 960
"""pixels: the README's video is this wide at the showcase's aspect"""


@dataclass(frozen=True)
class Take:
    """One run of a scene at ``size``: the picture after ``picture_step`` steps to ``picture``,
    and, when ``clip`` is given, the frames after each of ``clip_steps`` scaled to
    ``clip_size`` as an MP4 at ``fps``."""

    size: tuple[int, int]
    picture: Path
    picture_step: int
    clip: Path | None = None
    clip_size: tuple[int, int] = (2, 2)
    clip_steps: range = range(0)
    fps: float = 30.0


def clip_steps(scene: Scene) -> range:
    """The steps whose frames make the scene's gallery clip: CLIP_SECONDS at CLIP_FPS, the last
    at the preview step (or at CLIP_SECONDS when the preview comes earlier)."""
    settings = scene.settings
    steps = max(1, round(CLIP_SECONDS / settings.fixed_dt))
    stride = max(1, round(1.0 / (settings.fixed_dt * CLIP_FPS)))
    last = max(settings.preview_steps(), steps)
    return range(last - steps + stride, last + 1, stride)


def scene_take(scene: Scene, docs: Path, name: str, clip: bool = True) -> Take:
    """The gallery's picture of scene ``name`` under ``docs``, and its clip unless ``clip`` is
    False."""
    picture = Path(docs) / PICTURES / f"{name}.png"
    if not clip:
        return Take(gallery_size(scene), picture, scene.settings.preview_steps())
    steps = clip_steps(scene)
    return Take(gallery_size(scene), picture, scene.settings.preview_steps(),
                Path(docs) / CLIPS / f"{name}.mp4", clip_size(scene), steps,
                default_fps(scene) / steps.step)


def hero_take(scene: Scene, docs: Path, clip: bool = True) -> Take:
    """The README's showcase picture (at the scene's size) and, unless ``clip`` is False, its
    video (the whole shot, ``[scene] duration``, one frame a step)."""
    width, height = scene.settings.size
    size = (width, height)
    picture = Path(docs) / f"{HERO}.png"
    if not clip:
        return Take(size, picture, scene.settings.preview_steps())
    steps = range(1, scene.settings.duration_steps() + 1)
    return Take(size, picture, scene.settings.preview_steps(), Path(docs) / f"{HERO}.mp4",
                scaled_size(size, HERO_VIDEO_WIDTH), steps, default_fps(scene))


def scaled(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``frame`` at ``size`` (Lanczos); unchanged when it has that size already."""
    from PIL import Image

    if (frame.shape[1], frame.shape[0]) == tuple(size):
        return frame
    return np.asarray(Image.fromarray(frame, "RGBA").resize(size, Image.Resampling.LANCZOS))


def shoot(scene: Scene, take: Take) -> None:
    """Run ``scene`` once and write what ``take`` asks for, the frames done reported on stderr
    (output.Progress); the picture and the clip appear together or not at all. Ctrl-C stops
    between steps and leaves neither."""
    from emberfx.engine.engine import Engine

    group = OutputGroup()
    wanted = set(take.clip_steps) if take.clip is not None else set()
    with interrupts.deferred(notice=STOP_NOTICE):
        try:
            with Engine(scene, size=take.size) as engine:
                clip = (FrameWriter(take.clip, size=take.clip_size, fps=take.fps, group=group)
                        if take.clip is not None else None)
                picture = None
                steps = sorted(wanted | {take.picture_step})
                label = (take.clip or take.picture).name
                with clip if clip is not None else contextlib.nullcontext(), \
                        Progress(len(steps), label) as bar:
                    done = 0
                    for step in steps:
                        interrupts.check()
                        engine.step(step - done)
                        done = step
                        frame = engine.render()
                        if step == take.picture_step:
                            picture = frame
                        if clip is not None and step in wanted:
                            clip.add(scaled(frame, take.clip_size))
                        bar.update(1)
                assert picture is not None   # the picture's step is among the steps
                with FrameWriter(take.picture, size=engine.size, group=group) as still:
                    still.add(picture)
            interrupts.check()
            group.commit()
        except BaseException:
            group.discard()
            raise


def _described(take: Take) -> str:
    text = f"{take.picture} ({take.size[0]}x{take.size[1]})"
    if take.clip is not None:
        text += (f", {take.clip} ({len(take.clip_steps)} frames at {take.fps:g} fps, "
                 f"{take.clip_size[0]}x{take.clip_size[1]})")
    return text


def check_names(names: list[str], scenes: dict[str, Path]) -> None:
    """A one-line EmberError for the first name that is no bundled scene."""
    for name in names:
        if name not in scenes:
            raise EmberError(f"gallery: no bundled scene '{name}'; "
                             f"{suggest(name, sorted(scenes), 'scenes')}")


def write_gallery(docs: Path, names: list[str] | None = None, pictures: bool = True,
                  clips: bool = True, quality: str = "auto") -> list[Path]:
    """Everything ``emberfx gallery`` writes under ``docs`` (see the module's doc) for the
    bundled scenes ``names`` (all when None); ``pictures`` False renders nothing, ``clips``
    False renders the pictures alone; ``quality`` as ``emberfx render --quality``. Returns the
    contact sheet's and the page's paths."""
    docs = Path(docs)
    scenes = bundled_scenes()
    check_names(list(names or []), scenes)
    if not docs.is_dir():
        raise EmberError(f"gallery: {docs} is no folder (the documentation folder, e.g. docs)")
    if pictures:
        for folder in (docs / PICTURES, docs / CLIPS):
            folder.mkdir(parents=True, exist_ok=True)
        for name in sorted(dict.fromkeys(names or scenes)):
            scene = for_adapter(load_scene(scenes[name]), quality)
            takes = [scene_take(scene, docs, name, clip=clips)]
            if name == HERO:
                takes.append(hero_take(scene, docs, clip=clips))
            for take in takes:
                shoot(scene, take)
                print(f"wrote {_described(take)}", flush=True)
    drawn = {name: docs / PICTURES / f"{name}.png" for name in sorted(scenes)}
    drawn = {name: path for name, path in drawn.items() if path.is_file()}
    written = [write_contact_sheet(docs / SHEET, drawn)] if drawn else []
    return [*written, write_gallery_page(docs)]


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("docs", metavar="DIR", type=Path,
                   help="the documentation folder (docs): writes DIR/gallery/SCENE.png, "
                        "DIR/gallery/clips/SCENE.mp4, DIR/gallery.png, DIR/gallery.md, "
                        "DIR/showcase.png and DIR/showcase.mp4")
    s.add_argument("scenes", nargs="*", metavar="SCENE",
                   help="bundled scenes to render again (default: all); the sheet and the page "
                        "always show every scene")
    s.add_argument("--page-only", action="store_true",
                   help="render nothing: write the contact sheet and the page from the pictures "
                        "already in DIR (no GPU)")
    s.add_argument("--no-clips", action="store_true",
                   help="render the pictures but no clip or video (quicker)")
    s.add_argument("--quality", choices=QUALITIES, default="auto",
                   help="auto: on a CPU adapter, apply each scene's [cpu] preset; full: render "
                        "the scenes as written (default: auto)")


def run(args: argparse.Namespace) -> int:
    for path in write_gallery(args.docs, list(args.scenes) or None,
                              pictures=not args.page_only, clips=not args.no_clips,
                              quality=args.quality):
        print(f"wrote {path}", flush=True)
    return 0
