"""How the scene is rendered: the ``[render]`` table.

``msaa`` is the number of samples per pixel of the multisampled target that solid geometry
(mesh particles, cloth, visible colliders, Life and fractal quads) is drawn into before it is
resolved into the single-sampled scene image (runtime/engine/renderer.py). Sprites (billboard
emitters, trails, fluids) are drawn after the resolve at one sample per pixel: their edges are
soft already, and blending them at four samples would cost four times the fill.
"""

from __future__ import annotations

from dataclasses import dataclass

SAMPLE_COUNTS = (1, 4)
"""the multisample counts every WebGPU device supports for every renderable format"""


@dataclass(slots=True)
class RenderSettings:
    """The ``[render]`` table."""

    msaa: int = 4
    """samples per pixel for meshes, cloth and colliders: 4 smooths their edges, 1 turns
    anti-aliasing off (WebGPU guarantees no other count)"""

    def __post_init__(self):
        if self.msaa not in SAMPLE_COUNTS or isinstance(self.msaa, bool):
            raise ValueError(f"msaa: expected 1 (off) or 4, the sample counts WebGPU "
                             f"guarantees, found {self.msaa!r}")
