"""Render bundles for the frame graph's draws: record a target's draw calls once, replay them.

Every wgpu call costs Python time (WGPU_NOTES: a few microseconds each through wgpu-py), and a
frame's draws are the same calls frame after frame: set the pipeline, the bind groups, draw. A
GPURenderBundle records them once; each frame then costs one ``execute_bundles`` per target.

A bundle is reused only for exactly the same calls. Its key holds the objects themselves (the
pipelines, the bind groups chosen this frame, the index and indirect buffers) and the counts, so a
ping-pong system that alternates bind groups gets one bundle per parity, and a rebuilt entity's new
buffers never meet an old bundle (the key keeps the old objects alive, so their ids are never
reused while the entry exists). Indirect draws read their counts from the GPU at execution, so a
bundle of them stays right as the counts change. The cache is small and least-recently-used.
"""

from __future__ import annotations

from collections import OrderedDict

MAX_BUNDLES = 32


def draw_key(name: str, op) -> tuple:
    """Everything one Draw records, with its bind groups chosen for this frame."""
    groups = tuple(g() if callable(g) else g for g in op.bind_groups)
    return (name, op.pipeline, groups, (op.indirect, *op.more_indirect) if op.indirect else None,
            op.index, op.vertices, op.instances)


def record(encoder, key: tuple, labels: bool) -> None:
    """Record one draw (a ``draw_key``) into a render pass or a render bundle encoder."""
    name, pipeline, groups, indirect, index, vertices, instances = key
    if labels:
        encoder.push_debug_group(name)
    encoder.set_pipeline(pipeline)
    for slot, group in enumerate(groups):
        encoder.set_bind_group(slot, group)
    if indirect is not None:
        draw = encoder.draw_indirect
        if index is not None:   # indexed and indirect: the counts come from the GPU
            encoder.set_index_buffer(index[0], index[1])
            draw = encoder.draw_indexed_indirect
        for args in indirect:   # (buffer, offset) each
            draw(*args)
    elif index is not None:
        buffer, index_format, count = index
        encoder.set_index_buffer(buffer, index_format)
        encoder.draw_indexed(count, instances)
    else:
        encoder.draw(vertices, instances)
    if labels:
        encoder.pop_debug_group()


class BundleCache:
    def __init__(self, device, size: int = MAX_BUNDLES):
        self.device = device
        self.size = size
        self.bundles: OrderedDict = OrderedDict()
        self.recorded = 0     # bundles recorded so far (tests: reuse means this stops growing)

    def bundle(self, draws: list[tuple], color_format: str | None, depth_format: str | None,
               labels: bool, depth_read_only: bool = False, sample_count: int = 1):
        """The bundle for these draws (``draw_key`` tuples), recorded on first use; a bundle
        replayed in a pass with a read-only depth attachment must be recorded as one, and one
        replayed into a multisampled target with its sample count; ``color_format`` None: a
        depth-only target's."""
        key = (color_format, depth_format, depth_read_only, sample_count, labels, tuple(draws))
        bundle = self.bundles.get(key)
        if bundle is not None:
            self.bundles.move_to_end(key)
            return bundle
        colors = [] if color_format is None else [color_format]
        encoder = self.device.create_render_bundle_encoder(
            label=f"emberfx:bundle:{draws[0][0]}", color_formats=colors,
            depth_stencil_format=depth_format, depth_read_only=depth_read_only,
            sample_count=sample_count)
        for draw in draws:
            record(encoder, draw, labels)
        bundle = self.bundles[key] = encoder.finish()
        self.recorded += 1
        while len(self.bundles) > self.size:
            self.bundles.popitem(last=False)
        return bundle

    def clear(self) -> None:
        self.bundles.clear()
