"""``emberfx bench capacity``: how much world one GPU holds, and what splitting a larger one
across GPUs would make the interconnect carry per step. Arithmetic, no measurement: the tables
of docs/scaling.md come from here (tests/test_capacity.py checks the page against them).

Bytes per particle and per cell come from the WGSL struct sizes (``layout.struct_dtype``) and the
buffers each system allocates in its ``add`` (systems/emitter/system.py, systems/life/system.py,
systems/particle_life/system.py); this module repeats those buffer lists, and the test compares
them with what a real Engine allocates.
"""

from __future__ import annotations

import math

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype

GIB = 1 << 30
# One NVIDIA H200 as these machines expose it through Vulkan (shared/WGPU_NOTES.md); the storage
# binding limit is 4 bytes short of 2 GiB, as its driver reports it (a 64M-slot pool is refused)
H200 = {"memory": 139 * GIB, "max-buffer-size": 4 * GIB,
        "max-storage-buffer-binding-size": 2 * GIB - 4}
# Both directions together, per GPU, from NVIDIA's H200 page (nvidia.com/en-us/data-center/h200):
# "NVIDIA NVLink: 900GB/s, PCIe Gen5: 128GB/s". One direction is half.
INTERCONNECTS = {"NVLink 4 (H200 SXM)": 900e9, "PCIe Gen5 x16": 128e9}
# Measured on one H200 (docs/performance.md): Life 65536x32768 21.4 Tcell/s; particle life 1M,
# 2D, ~20 per cell: 2432 steps/s (grid_kernel = "gathered", precision = "exact").
LIFE_RATE = 21.4e12                     # cell updates per second
PARTICLE_LIFE_RATE = 2432 * (1 << 20)   # particle-steps per second
PER_CELL = 20                           # particles per r_max x r_max cell (the bench's swarms)
# Mean |v_x| per step in units of r_max: 0.002 rounds up what the bench's 2D swarm showed
# (50k particles, r_max 0.02, 6 random species, steps 50-300: mean |v_x| dt / r_max
# 0.0012-0.0014, mean speed 0.0018-0.0023); 0.1 stands for a swarm 50x livelier.
SPEEDS = (0.002, 0.1)
SPLITS = (2, 4, 8)


def allocated(size: int) -> int:
    """Bytes a buffer of ``size`` takes: GpuContext.buffer makes at least 16, in whole words."""
    return max(16, (size + 3) // 4 * 4)


def scan_sums_bytes(n: int) -> int:
    """The tile sums a PrefixScan of n values allocates, all levels (runtime/blocks/scan.py)."""
    tile = wgsl.int_constant("common/scan_tiles.wgsl", "TILE")
    total = 0
    while True:
        tiles = max(1, math.ceil(n / tile))
        total += allocated(tiles * 4)
        if tiles == 1:
            return total
        n = tiles


def emitter_buffers(n: int, blend: str = "additive", allocation: str = "ordered",
                    ranks_pass: bool = False, one_pass: bool = False) -> dict:
    """Bytes of an emitter pool's buffers that grow with its capacity n. ``ranks_pass``: the
    ordered step ranks free slots in one workgroup (systems/emitter/step.py, pools up to a
    few million slots), without the scans' buffers; ``one_pass``: the pool may take the
    one-pass step (look-back words per block, born slots); the large pools this page is about
    scan."""
    particle = struct_dtype("emitter/types.wgsl", "Particle").itemsize
    block = wgsl.int_constant("emitter/types.wgsl", "BLOCK")
    block_words = wgsl.int_constant("emitter/types.wgsl", "BLOCK_WORDS")
    blocks = math.ceil(n / block)
    sizes = {"particles": n * particle, "alive_list": n * 4, "block_alive": blocks * 4}
    if not ((ranks_pass or one_pass) and allocation == "ordered"):
        sizes["block_alive:scan_sums"] = scan_sums_bytes(blocks)
    if blend == "alpha":
        sizes["sort_keys"] = n * 4
    if allocation == "ordered":   # births rank free slots with a scan of block_free
        sizes.update({"free_mask": blocks * block_words * 4, "block_free": blocks * 4})
        if not (ranks_pass or one_pass):
            sizes["block_free:scan_sums"] = scan_sums_bytes(blocks)
        if one_pass:
            control = wgsl.int_constant("emitter/update_ranked.wgsl", "CONTROL_WORDS")
            sizes.update({"tiles": (control + blocks) * 4, "birth_slots": blocks * block * 4})
    else:
        sizes["alive_mask"] = blocks * block_words * 4
    return {key: size if key.endswith("scan_sums") else allocated(size)
            for key, size in sizes.items()}


def life_buffers(width: int, height: int, memory: str = "pingpong") -> dict:
    """Bytes of a Life layer's state buffers (32 cells per u32, rows padded to whole words)."""
    words = (width + 31) // 32 * height
    sizes = {"state0": words * 4}
    if memory == "pingpong":
        sizes["state1"] = words * 4
    return sizes


def particle_life_buffers(n: int, cells: int) -> dict:
    """Bytes of a swarm's buffers that grow with its count n and its grid's cells (the counts
    and their scan have one entry more: the dead cell's, emberfx.blocks.neighbours)."""
    particle = struct_dtype("particle_life/types.wgsl", "LifeParticle").itemsize
    sizes = {"particles0": n * particle, "particles1": n * particle, "ids0": n * 4,
             "ids1": n * 4, "cell_of": n * 4, "cell_particles": n * 4,
             "cell_count": (cells + 1) * 4,
             "cell_cursor": cells * 4,
             "gathered": n * 16}   # positions in cell order (the default kernel and precision)
    return {**{key: allocated(size) for key, size in sizes.items()},
            "cell_count:scan_sums": scan_sums_bytes(cells + 1)}


def per_item() -> dict:
    """Bytes per emitter slot, per Life cell and per particle-life particle, at large sizes."""
    n = 1 << 26
    return {"emitter slot (additive, ordered)": sum(emitter_buffers(n).values()) / n,
            "emitter slot (alpha, ordered)": sum(emitter_buffers(n, "alpha").values()) / n,
            "Life cell (pingpong)": sum(life_buffers(1 << 16, 1 << 15).values()) / (1 << 31),
            "Life cell (inplace)": sum(life_buffers(1 << 16, 1 << 15, "inplace").values())
            / (1 << 31),
            "particle-life particle (20 per cell)":
                sum(particle_life_buffers(n, n // PER_CELL).values()) / n}


def largest(limits: dict | None = None) -> list[dict]:
    """The largest single pool, grid and swarm, and what all of memory would hold."""
    limits = limits or H200
    binding, memory = limits["max-storage-buffer-binding-size"], limits["memory"]
    items = per_item()
    particle = struct_dtype("emitter/types.wgsl", "Particle").itemsize
    pl_particle = struct_dtype("particle_life/types.wgsl", "LifeParticle").itemsize
    pool = binding // particle
    life_cells = binding * 8            # one state buffer, 1 bit per cell
    swarm = binding // pl_particle
    return [
        {"what": "emitter pool", "one entity": pool, "limited by": f"particles buffer, "
         f"{particle} B/slot", "bytes of one": sum(emitter_buffers(pool).values()),
         "all memory holds": int(memory // items["emitter slot (additive, ordered)"])},
        {"what": "Life grid (pingpong)", "one entity": life_cells,
         "limited by": "one state buffer, 1 bit/cell",
         "bytes of one": 2 * binding, "all memory holds": int(memory // items[
             "Life cell (pingpong)"])},
        {"what": "particle-life swarm", "one entity": swarm,
         "limited by": f"particles0, {pl_particle} B/particle",
         "bytes of one": sum(particle_life_buffers(swarm, swarm // PER_CELL).values()),
         "all memory holds": int(memory // items["particle-life particle (20 per cell)"])},
    ]


def life_halo(width: int = 65536, height: int = 32768, splits=SPLITS,
              rate: float = LIFE_RATE) -> list[dict]:
    """A torus grid cut into k strips of whole rows, halo 1 row: each GPU sends its top and
    bottom row to its neighbours every generation, and steps at ``rate`` on its share."""
    row = (width + 31) // 32 * 4
    rows = []
    for k in splits:
        generations = rate / (width * height / k)     # per second, each GPU on its strip
        out_per_gpu = 2 * row
        rows.append({"GPUs": k, "rows per GPU": height // k, "bytes out per GPU per step":
                     out_per_gpu, "bytes per step, all links": k * out_per_gpu,
                     "generations/s": generations, "GB/s out per GPU": out_per_gpu *
                     generations / 1e9, "us per generation": 1e6 / generations})
    return rows


def particle_life_domains(particles: int, splits=SPLITS, speeds=SPEEDS,
                          rate: float = PARTICLE_LIFE_RATE) -> list[dict]:
    """A 2D torus box of ``particles`` at PER_CELL per r_max^2, cut into k slabs. Per step each
    GPU sends the particles within r_max of its two boundaries (ghosts: position and species,
    16 B) and those crossing them (migrants: the particle and its id, 36 B); the one-way flux
    through a boundary of length L is density * L * mean|v_x| * dt / 2."""
    pl_particle = struct_dtype("particle_life/types.wgsl", "LifeParticle").itemsize
    side = math.sqrt(particles / PER_CELL)          # box side in r_max
    rows = []
    for k in splits:
        ghosts = 2 * PER_CELL * side                # both boundaries of one slab
        steps = rate * k / particles                 # per second
        for speed in speeds:
            migrants = 2 * PER_CELL * side * speed / 2
            out = ghosts * 16 + migrants * (pl_particle + 4)
            rows.append({"particles": particles, "GPUs": k, "mean abs(v_x), r_max/step": speed,
                         "ghosts out per GPU per step": ghosts,
                         "migrants out per GPU per step": migrants,
                         "bytes out per GPU per step": out, "steps/s": steps,
                         "GB/s out per GPU": out * steps / 1e9})
    return rows


def bench_capacity() -> list[dict]:
    """The tables as bench rows, for an H200 and for this device's limits."""
    from emberfx.core.gpu import get_context

    ctx = get_context()
    # only the binding limit matters for one entity; the memory figure is not used here
    here = {**H200, **{k: ctx.limits[k] for k in ("max-buffer-size",
                                                  "max-storage-buffer-binding-size")}}
    rows = [{"name": f"bytes per {what}", "value": value, "unit": "B"}
            for what, value in per_item().items()]
    units = {"emitter pool": "slots", "Life grid (pingpong)": "cells",
             "particle-life swarm": "particles"}
    for label, limits in (("H200", H200), ("this device", here)):
        for entry in largest(limits):
            rows.append({"name": f"largest {entry['what']}, {label}",
                         "value": float(entry["one entity"]), "unit": units[entry["what"]],
                         "limited_by": entry["limited by"]})
    for entry in life_halo():
        rows.append({"name": f"Life 65536x32768 on {entry['GPUs']} GPUs, halo out per GPU",
                     "value": entry["GB/s out per GPU"], "unit": "GB/s",
                     "bytes_per_step": entry["bytes out per GPU per step"]})
    return rows


# ---------------------------------------------------------------- the page's tables

def _number(value) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _table(rows: list[dict], columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(v if isinstance(v, str) else _number(v)
                                       for v in (row[c] for c in columns)) + " |")
    return "\n".join(lines)


def markdown_tables() -> dict[str, str]:
    """docs/scaling.md's tables by name, exactly as they appear there."""
    per = per_item()
    tables = {"per_item": _table([{"item": k, "bytes": f"{v:.4f}"} for k, v in per.items()],
                                 ["item", "bytes"])}
    big = [{**e, "GiB of one": e["bytes of one"] / GIB} for e in largest()]
    tables["largest"] = _table(big, ["what", "one entity", "limited by", "GiB of one",
                                     "all memory holds"])
    tables["life_halo"] = _table(life_halo(), ["GPUs", "rows per GPU",
                                               "bytes out per GPU per step",
                                               "bytes per step, all links", "us per generation",
                                               "GB/s out per GPU"])
    columns = ["particles", "GPUs", "mean abs(v_x), r_max/step", "ghosts out per GPU per step",
               "migrants out per GPU per step", "bytes out per GPU per step", "steps/s",
               "GB/s out per GPU"]
    tables["particle_life_1m"] = _table(particle_life_domains(1 << 20), columns)
    tables["particle_life_128m"] = _table(particle_life_domains(1 << 27), columns)
    tables["links"] = _table([{"link": k, "GB/s both directions": v / 1e9,
                               "GB/s one direction": v / 2e9}
                              for k, v in INTERCONNECTS.items()],
                             ["link", "GB/s both directions", "GB/s one direction"])
    return tables

