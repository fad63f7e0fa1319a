"""How the cloth patches step: one frozen value, read by the system (``ClothSystem.tuning``)
and never changed while the system lives.

Both ways of stepping give the same bytes; the value chooses between them. An Engine takes one
at construction (``Engine(scene, cloth_tuning=ClothTuning(...))``); without one, ``DEFAULT``.
Tests and ``emberfx bench cloth`` compare the ways with ``ClothTuning(resident_up_to_vertices=0)``
and the like.

This module imports nothing of the cloth family, so any of its modules may import it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The resident step's limit on a hardware adapter, in vertices per patch (see ClothTuning).
RESIDENT_ON_HARDWARE = 1024


@dataclass(frozen=True)
class ClothTuning:
    """The choices of the cloth step (systems/cloth/system.py builds it)."""

    # Patches of at most this many vertices step all their substeps in one dispatch, a
    # workgroup each (cloth/step_resident.wgsl): one launch and a few wgpu calls a step instead
    # of several per substep. Larger ones take a dispatch per substep over the whole grid
    # (cloth/step.wgsl), which spreads a patch over the GPU. 0: never. None:
    # RESIDENT_ON_HARDWARE on a hardware adapter, and 0 on a software one, where one workgroup
    # runs on one CPU core (on lavapipe the showcase's 32 x 20 flag stepped in 14 ms against
    # 11 ms). `emberfx bench cloth` times both ways for small patches.
    resident_up_to_vertices: int | None = None

    def __post_init__(self) -> None:
        limit = self.resident_up_to_vertices
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            raise ValueError(f"ClothTuning.resident_up_to_vertices: expected None or a whole "
                             f"number, 0 or more, found {limit!r}")

    def resident_limit(self, gpu) -> int:
        """The most vertices of a patch that steps every substep in one workgroup on ``gpu``
        (a GpuContext)."""
        if self.resident_up_to_vertices is not None:
            return self.resident_up_to_vertices
        return 0 if gpu.is_software else RESIDENT_ON_HARDWARE


DEFAULT = ClothTuning()
