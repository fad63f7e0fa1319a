"""The pressure projection's multigrid: V-cycles of red-black Gauss-Seidel on the cell-centred
pressure equation (shaders/gas/poisson.wgsl), each level half the last per axis, down to at
least 4 cells.

A V-cycle, from level 0 (whose right-hand side the divergence pass wrote):
  on each level but the last   PRE_SWEEPS sweeps, then the residual averaged onto the next
                               level as its right-hand side (its correction starts at 0)
  on the last                  coarse sweeps: 2 x its largest axis, at least 8; in one
                               workgroup's dispatch (gas/mg_coarse.wgsl) where the level has
                               at most COARSE_CELLS cells, else a pass per half-sweep
  back up each level           the coarser correction interpolated trilinearly and added, then
                               POST_SWEEPS sweeps
A sweep is two passes, one per colour, each with an invocation per cell of its colour. The
count of V-cycles is the gas's `pressure_cycles`: fixed, so that no step waits on the CPU.
"""

from __future__ import annotations

import math

from emberfx.core.frame_graph import Pass, Phase

PRE_SWEEPS = 2
POST_SWEEPS = 2
MIN_COARSE_SWEEPS = 8
COARSE_CELLS = 4096   # the most cells a coarsest level solved in one workgroup may have


def coarse_sweeps(cells: tuple[int, int, int]) -> int:
    return max(MIN_COARSE_SWEEPS, 2 * max(cells))


def v_cycles(system, name: str, cycles: int, cells: list[tuple[int, int, int]],
             b: dict) -> list[Pass]:
    """The passes of ``cycles`` V-cycles over levels of ``cells`` per axis; ``b`` holds
    ``params``, ``levels``, each level's ``rhs<l>`` and ``pressure<l>`` (in the colour-split
    order of shaders/gas/types.wgsl's level_slot), and level 0's ``solid_bits``."""
    build, gpu = system.build, system.gpu
    last = len(cells) - 1

    def groups(level: int):
        return gpu.grid(math.ceil(math.prod(cells[level]) / 64))

    def smoothing(level: int) -> dict:
        return {"params": b["params"], "levels": b["levels"], "rhs": b[f"rhs{level}"],
                "pressure": b[f"pressure{level}"], "solid_bits": b["solid_bits"]}

    def smooth(cycle: int, level: int, stage: str, sweeps: int) -> list[Pass]:
        nx, ny, nz = cells[level]
        half = gpu.grid(math.ceil((nx + 1) // 2 * ny * nz / 64))
        return [build.compute(
            f"{name}:gas:mg:{cycle}:{level}:{stage}:{s}:{color}", Phase.SIMULATE,
            "gas/mg_smooth.wgsl", half, smoothing(level),
            constants={"LEVEL": level, "COLOR": color},
            does=f"level {level}: a red-black Gauss-Seidel half-sweep of the pressure")
            for s in range(sweeps) for color in (0, 1)]

    def solve_coarsest(cycle: int) -> list[Pass]:
        sweeps = coarse_sweeps(cells[last])
        if math.prod(cells[last]) > COARSE_CELLS:
            return smooth(cycle, last, "coarse", sweeps)
        return [build.compute(
            f"{name}:gas:mg:{cycle}:{last}:coarse", Phase.SIMULATE, "gas/mg_coarse.wgsl",
            (1, 1, 1), smoothing(last), constants={"LEVEL": last, "SWEEPS": sweeps},
            does=f"level {last}: {sweeps} red-black Gauss-Seidel sweeps in one workgroup")]

    out: list[Pass] = []
    for cycle in range(cycles):
        for level in range(last):
            out += smooth(cycle, level, "down", PRE_SWEEPS)
            out.append(build.compute(
                f"{name}:gas:mg:{cycle}:{level}:restrict", Phase.SIMULATE,
                "gas/mg_restrict.wgsl", groups(level + 1),
                {"params": b["params"], "levels": b["levels"], "rhs": b[f"rhs{level}"],
                 "pressure": b[f"pressure{level}"], "coarse_rhs": b[f"rhs{level + 1}"],
                 "coarse_pressure": b[f"pressure{level + 1}"], "solid_bits": b["solid_bits"]},
                constants={"LEVEL": level},
                does=f"level {level}'s residual, averaged: level {level + 1}'s right-hand side"))
        out += solve_coarsest(cycle)
        for level in range(last - 1, -1, -1):
            out.append(build.compute(
                f"{name}:gas:mg:{cycle}:{level}:prolong", Phase.SIMULATE,
                "gas/mg_prolong.wgsl", groups(level),
                {"params": b["params"], "levels": b["levels"],
                 "coarse_pressure": b[f"pressure{level + 1}"],
                 "pressure": b[f"pressure{level}"]},
                constants={"LEVEL": level},
                does=f"level {level + 1}'s correction, interpolated into level {level}"))
            out += smooth(cycle, level, "up", POST_SWEEPS)
    return out
