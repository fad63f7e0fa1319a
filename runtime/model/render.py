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
    """The ``[render]`` table: how the scene is drawn. Meshes (mesh particles), cloth, visible
    colliders and Life or fractal quads are drawn with ``msaa`` samples per pixel and resolved
    into the scene image; their depth is resolved too, to the nearest sample, and that is the
    depth soft particles, depth collisions and ``--depth`` read. Sprites (billboard emitters,
    trails, fluid particles) are drawn after the resolve at one sample per pixel, tested against
    the resolved depth: their edges are soft already, and blending them at four samples would
    cost up to four times the fill. Post effects work on the resolved image."""

    msaa: int = 4
    """samples per pixel for meshes, cloth, colliders and Life or fractal quads: 4 smooths their
    edges, 1 turns anti-aliasing off (1 and 4 are the counts WebGPU guarantees); a reload that
    changes it restarts the scene"""

    def __post_init__(self):
        if self.msaa not in SAMPLE_COUNTS or isinstance(self.msaa, bool):
            raise ValueError(f"msaa: expected 1 (off) or 4, the sample counts WebGPU "
                             f"guarantees, found {self.msaa!r}")
