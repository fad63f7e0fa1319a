"""Render pipelines for camera-facing sprites (shaders/common/sprite.wgsl), shared by every
system that draws particles: one pipeline per (draw shader, blend mode), cached per device."""

from __future__ import annotations

from emberfx import wgsl

BLENDS = {
    "additive": {"color": {"src_factor": "one", "dst_factor": "one", "operation": "add"},
                 "alpha": {"src_factor": "zero", "dst_factor": "one", "operation": "add"}},
    "alpha": {"color": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"},
              "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}},
    "opaque": None,
}

_CACHE: dict[tuple, object] = {}


def sprite_pipeline(device, shader: str, blend: str, color_format: str, depth_format: str):
    """The pipeline drawing ``shader``'s vs_main with common/sprite.wgsl's fs_<blend>."""
    key = (id(device), shader, blend, color_format, depth_format)
    if key not in _CACHE:
        module = wgsl.create_module(device, shader)
        target = {"format": color_format}
        if BLENDS[blend] is not None:
            target["blend"] = BLENDS[blend]
        _CACHE[key] = device.create_render_pipeline(
            label=f"{shader}:{blend}", layout="auto",
            vertex={"module": module, "entry_point": "vs_main"},
            primitive={"topology": "triangle-list"},
            # sprites test depth (hidden behind opaque geometry); only opaque ones write it
            depth_stencil={"format": depth_format, "depth_write_enabled": blend == "opaque",
                           "depth_compare": "less"},
            fragment={"module": module, "entry_point": f"fs_{blend}", "targets": [target]})
    return _CACHE[key]
