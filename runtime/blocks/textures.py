"""Sprite textures: images read with pillow or built in (procedural), uploaded once per device as
rgba8unorm-srgb with a full mip chain made on the GPU, and the trilinear sampler that reads them.

WebGPU has no generateMipmap and sRGB formats cannot be storage textures, so each mip level is one
render pass of shaders/common/mip.wgsl reading the level above. Texels keep straight alpha (as
PNGs store it); the downsample weights colour by alpha so transparent texels add no fringe.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import wgpu

from emberfx.core.bindings import RENDER, group_layouts
from emberfx.core.errors import special_file_problem
from emberfx.core.pipelines import RenderKey, render_pipeline

FORMAT = "rgba8unorm-srgb"
MIP_SHADER = "common/mip.wgsl"
BUILTIN_SIZE = 64
BUILTINS = ("dot", "soft", "star", "smoke", "spark", "ring")
"""names a scene's `texture` may give instead of a file"""

_TEXTURES: dict[tuple, wgpu.GPUTextureView] = {}
_SAMPLERS: dict[int, wgpu.GPUSampler] = {}


class TextureError(ValueError):
    """An image that cannot be a sprite texture; the message reads "expected ..., found ..."."""


def _disk(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Texel-centre coordinates in -1..1 (x right, y up) and r^2."""
    c = (np.arange(size) + 0.5) / size * 2.0 - 1.0
    x, y = np.meshgrid(c, -c)
    return x, y, x * x + y * y


def _value_noise(size: int, cells: int, rng: np.random.Generator) -> np.ndarray:
    """Smooth value noise that tiles, sampled on a size x size grid."""
    lattice = rng.random((cells, cells))
    t = np.arange(size) / size * cells
    i0 = np.floor(t).astype(int)
    f = t - i0
    f = f * f * (3.0 - 2.0 * f)
    i1 = (i0 + 1) % cells
    a = lattice[np.ix_(i0, i0)]
    b = lattice[np.ix_(i0, i1)]
    c = lattice[np.ix_(i1, i0)]
    d = lattice[np.ix_(i1, i1)]
    fy, fx = f[:, None], f[None, :]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def builtin_image(name: str, size: int = BUILTIN_SIZE) -> np.ndarray:
    """The built-in texture ``name`` as (size, size, 4) uint8, white with the shape in alpha.
    "dot" is the round falloff (1 - r^2)^2 that untextured sprites draw analytically."""
    x, y, r2 = _disk(size)
    inside = r2 < 1.0
    if name == "dot":
        alpha = np.where(inside, (1.0 - r2) ** 2, 0.0)
    elif name == "soft":   # a gaussian that reaches zero at the edge
        alpha = np.clip((np.exp(-4.0 * r2) - math.exp(-4.0)) / (1.0 - math.exp(-4.0)), 0.0, 1.0)
    elif name == "star":   # a bright core with four thin rays
        rays = np.exp(-np.abs(x) * 40.0) + np.exp(-np.abs(y) * 40.0)
        alpha = np.clip(np.exp(-12.0 * r2) + rays * np.clip(1.0 - np.sqrt(r2), 0.0, 1.0),
                        0.0, 1.0)
    elif name == "smoke":   # fractal noise inside a soft disk (fixed seed: the same everywhere)
        rng = np.random.default_rng(7)
        octaves = [_value_noise(size, cells, rng) / (k + 1)
                   for k, cells in enumerate((4, 8, 16))]
        noise = np.sum(octaves, axis=0) / (1.0 + 1.0 / 2.0 + 1.0 / 3.0)
        alpha = np.clip(1.0 - r2, 0.0, 1.0) ** 1.5 * np.clip(noise * 1.6 - 0.2, 0.0, 1.0)
    elif name == "spark":   # a streak along x, for velocity-aligned sprites
        alpha = np.exp(-(x * x) / 0.35 - (y * y) / 0.01) * inside
    elif name == "ring":   # a thin soft circle at 0.8 of the radius, for ripples and shockwaves
        alpha = np.exp(-((np.sqrt(r2) - 0.8) / 0.08) ** 2) * inside
    else:
        raise TextureError(f"expected a file or one of {', '.join(BUILTINS)}, found '{name}'")
    image = np.full((size, size, 4), 255, np.uint8)
    image[..., 3] = np.round(np.clip(alpha, 0.0, 1.0) * 255.0).astype(np.uint8)
    return image


def read_image(path: Path, name: str, limit: int) -> np.ndarray:
    """An image file as (h, w, 4) uint8 RGBA (straight alpha), through pillow; its size is
    checked against ``limit`` texels a side before its pixels are decoded."""
    from PIL import Image, UnidentifiedImageError

    _check_regular(path, name)
    try:
        with Image.open(path) as image:
            _check_side(name, *image.size, limit)
            return np.asarray(image.convert("RGBA"), np.uint8).copy()
    except FileNotFoundError:
        raise TextureError(f"expected an existing image file, found '{name}' "
                           f"(resolved to {path})") from None
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        if isinstance(exc, TextureError):
            raise
        raise TextureError(f"expected an image pillow can read, found '{name}' "
                           f"({type(exc).__name__})") from None


def _check_regular(path: Path, name: str) -> None:
    """Refuse a FIFO or a device before pillow opens it (the open would block, or read
    forever)."""
    special = special_file_problem(path, "image")
    if special is not None:
        raise TextureError(f"{special} (texture '{name}')")


def _check_side(name: str, width: int, height: int, limit: int) -> None:
    if max(width, height) > limit:
        raise TextureError(f"expected an image at most {limit} texels on a side (this device's "
                           f"max-texture-dimension-2d), found '{name}' of {width} x {height}")


def image_size(texture: str, resolve) -> tuple[int, int]:
    """(width, height) of a texture named in a scene, without decoding its pixels."""
    if texture in BUILTINS:
        return BUILTIN_SIZE, BUILTIN_SIZE
    from PIL import Image, UnidentifiedImageError

    path = resolve(texture)
    _check_regular(path, texture)
    try:
        with Image.open(path) as image:
            return image.size
    except FileNotFoundError:
        raise TextureError(f"expected an existing image file, found '{texture}' "
                           f"(resolved to {path})") from None
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        raise TextureError(f"expected an image pillow can read, found '{texture}' "
                           f"({type(exc).__name__})") from None


def mip_levels(width: int, height: int) -> int:
    return int(math.floor(math.log2(max(width, height)))) + 1


def sprite_texture(device, texture: str, resolve=None) -> wgpu.GPUTextureView:
    """The view of ``texture`` (a built-in name or a path, resolved with ``resolve``) on
    ``device``, uploaded with its mip chain on first use; built-ins are cached for the
    device's life, files by path and modification time."""
    if texture in BUILTINS:
        key: tuple = (id(device), texture)
    else:
        path = Path(resolve(texture) if resolve is not None else texture)
        key = (id(device), str(path), path.stat().st_mtime_ns if path.exists() else 0)
    if key not in _TEXTURES:
        limit = device.limits["max-texture-dimension-2d"]
        image = (builtin_image(texture) if texture in BUILTINS
                 else read_image(Path(key[1]), texture, limit))
        _TEXTURES[key] = upload_with_mips(device, image, label=texture)
    return _TEXTURES[key]


def upload_with_mips(device, image: np.ndarray, label: str = "sprite") -> wgpu.GPUTextureView:
    """Upload (h, w, 4) uint8 sRGB texels as level 0, then render each level from the one above."""
    height, width = image.shape[:2]
    levels = mip_levels(width, height)
    texture = device.create_texture(
        label=label, size=(width, height, 1), format=FORMAT, mip_level_count=levels,
        usage=(wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST
               | wgpu.TextureUsage.RENDER_ATTACHMENT))
    device.queue.write_texture({"texture": texture, "mip_level": 0, "origin": (0, 0, 0)},
                               np.ascontiguousarray(image).tobytes(),
                               {"offset": 0, "bytes_per_row": width * 4, "rows_per_image": height},
                               (width, height, 1))
    if levels > 1:
        pipeline = _mip_pipeline(device)
        encoder = device.create_command_encoder(label=f"{label}:mips")
        for level in range(1, levels):
            source = texture.create_view(base_mip_level=level - 1, mip_level_count=1)
            target = texture.create_view(base_mip_level=level, mip_level_count=1)
            group = device.create_bind_group(layout=group_layouts(device, MIP_SHADER, RENDER)[0],
                                             entries=[{"binding": 0, "resource": source}])
            rp = encoder.begin_render_pass(color_attachments=[{
                "view": target, "load_op": "clear", "store_op": "store",
                "clear_value": (0, 0, 0, 0)}])
            rp.set_pipeline(pipeline)
            rp.set_bind_group(0, group)
            rp.draw(3, 1, 0, 0)
            rp.end()
        device.queue.submit([encoder.finish()])
    return texture.create_view()


def _mip_pipeline(device) -> wgpu.GPURenderPipeline:
    return render_pipeline(device, RenderKey(MIP_SHADER, FORMAT, label="mip"))


def sprite_sampler(device) -> wgpu.GPUSampler:
    """Trilinear, clamped to the edge (a sprite's border texels are its outside)."""
    key = id(device)
    if key not in _SAMPLERS:
        _SAMPLERS[key] = device.create_sampler(
            label="sprite", mag_filter="linear", min_filter="linear", mipmap_filter="linear",
            address_mode_u="clamp-to-edge", address_mode_v="clamp-to-edge")
    return _SAMPLERS[key]
