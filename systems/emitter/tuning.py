"""How the emitters' step is taken and their batches drawn: one frozen value, read by the
system, its batches and the passes they build (``EmitterSystem.tuning``), never changed while
the system lives.

Every path of the ordered step gives the same bytes, and a culled draw the same image; these
fields choose among them and shape them. An Engine takes one at construction
(``Engine(scene, emitter_tuning=EmitterTuning(...))``); without one, ``DEFAULT``. Tests and
``emberfx bench`` choose a path or a shape with ``dataclasses.replace(DEFAULT, one_pass=False)``
and the like. The figures behind the defaults are in docs/performance.md.

This module imports nothing of the emitter family (it reads the one-pass shader's limits from
the WGSL), so the system, its batches and its passes may all import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from emberfx.core import wgsl

# the most blocks a tile of the one-pass step holds (its per-block arrays are this long)
MAX_TILE_BLOCKS = wgsl.int_constant("emitter/update_ranked.wgsl", "MAX_TILE_BLOCKS")
# invocations of a one-pass workgroup: its look-back reads at most one tile each a round
LOOK_LANES = wgsl.workgroup_size("emitter/update_ranked.wgsl")[0]
TileRow = tuple[int, int, bool]   # (from this many blocks in the pool, blocks per tile, prefetch)

# Blocks per tile of the one-pass step, and whether each block's particles are loaded while
# the block before is stepped, for an emitter alone, by the pool's blocks (the first row whose
# start the pool reaches): index 0 without forces acting on the pool, 1 with forces. Bigger
# pools take bigger tiles, so that fewer tiles take part in the look-back; forces cost
# registers that the prefetch also needs, so their rows differ.
TILE_BLOCKS_FROM: tuple[tuple[TileRow, ...], tuple[TileRow, ...]] = (
    ((32768, 16, True), (4096, 16, False), (2048, 8, False), (0, 4, False)),
    ((32768, 16, False), (16384, 8, True), (7168, 16, False), (6144, 10, False),
     (4096, 8, False), (0, 4, True)),
)


@dataclass(frozen=True)
class EmitterTuning:
    """The choices of the emitters' step (systems/emitter/step.py builds it), of their
    batches' draw (systems/emitter/culling.py)."""

    # Ordered allocation, where the one-pass step is not taken: True runs the free scan, births
    # per emitter and draw arguments as one single-workgroup pass (emitter/ranks.wgsl: update,
    # ranks, spawn) where its scan takes at most ``ranks_max_rounds`` rounds; False (and bigger
    # pools), the multi-pass path (free scan, count, alive scan, spawn, prepare).
    fused_ranks: bool = True
    # The most rounds of the ranks pass's serial scan: one workgroup scans round after round,
    # while the passes it replaces cost about the same at any size, so past a few rounds they
    # are faster.
    ranks_max_rounds: int = 2
    # Invocations of the ranks workgroup at most; None: the shader's MAX_THREADS, or fewer
    # where the device allows fewer. Fewer scan a pool in more rounds.
    ranks_threads: int | None = None
    # The one-pass ordered step (emitter/update_ranked.wgsl: update, free ranks by decoupled
    # look-back, born slots, alive list and draw arguments; then emitter/births.wgsl). None:
    # where the adapter keeps resident workgroups running
    # (GpuContext.keeps_resident_workgroups_running), for emitters alone that send and receive
    # no events, which take tiles of several blocks (batches and event sources would take tiles
    # of one block, slower than their three passes). True: every ordered simulation not
    # receiving events, tiles of one block included; False: never.
    one_pass: bool | None = None
    # Simulations of this many slots or more keep the multi-pass step; None: the most the
    # one-pass step's state words count (step.RANKED_MAX_SLOTS). Only lower limits apply.
    one_pass_slot_limit: int | None = None
    # Whether the one-pass step's tiles publish inclusive prefixes; False: every look-back walks
    # back to its emitter's first tile (the long path, for tests).
    publish_inclusive: bool = True
    # The most rounds a one-pass tile waits before it gives up (a wrong step, reported in the
    # emitter's stats): None, the shader's default on software adapters (llvmpipe's loop limit)
    # and 2^22 (seconds) elsewhere; 0 makes every wait give up.
    look_back_rounds: int | None = None
    # Blocks per tile of an emitter alone in the one-pass step (1 to MAX_TILE_BLOCKS); None: as
    # the table below says. Batches and event sources take tiles of one block whatever this
    # says (a tile never spans two emitters; an event source keeps its marks per block).
    tile_blocks: int | None = None
    # The table of tile shapes by pool size (TILE_BLOCKS_FROM's layout).
    tile_blocks_from: tuple[tuple[TileRow, ...], tuple[TileRow, ...]] = TILE_BLOCKS_FROM
    # True: each block's particles are loaded while the block before is stepped; False: in turn
    # (emitter/update_ranked.wgsl: PREFETCH_PARTICLES); None: as the table says.
    prefetch_particles: bool | None = None
    # True: a workgroup of the one-pass step ranks each tile after it stepped the next one (the
    # look-back then waits less); False: at once (emitter/update_ranked.wgsl).
    rank_after_next: bool = True
    # True: the one-pass update gives the born slots their particles itself, and no births pass
    # follows (emitter/update_ranked.wgsl: BIRTHS_HERE); False: the births pass gives them.
    # None: the update gives them where no force and no collider acts on the pool (the births'
    # code costs registers that the force loop also needs) and in pools of up to
    # ``births_in_update_up_to`` slots (where the births pass's launch weighs more).
    births_in_update: bool | None = None
    births_in_update_up_to: int = 1 << 20
    # The most workgroups the one-pass step launches (each takes tiles until none is left);
    # None: one per tile.
    workgroups_at_most: int | None = None
    # Tiles the one-pass step's look-back reads in its first round (emitter/update_ranked.wgsl:
    # LOOK_FIRST_LANES, 1 to LOOK_LANES); None: the shader's default.
    look_first_lanes: int | None = None
    # Blocks per spawn workgroup (emitter/spawn.wgsl BLOCKS_PER_GROUP) in simulations of at
    # least ``spawn_grouped_from`` blocks; smaller ones keep one block per workgroup, which runs
    # all their blocks side by side.
    spawn_blocks_per_group: int = 4
    spawn_grouped_from: int = 16384
    # Batches whose alive list has at least this many entries cull their sprites before the
    # draw (systems/emitter/culling.py); None: none cull. Below it the draws are cheap either
    # way, and the cull's dispatches would be most of the cost.
    cull_from: int | None = 1 << 16

    def __post_init__(self) -> None:
        lanes = self.look_first_lanes
        if lanes is not None and not 1 <= lanes <= LOOK_LANES:   # 0 would never read a tile
            raise ValueError(f"EmitterTuning.look_first_lanes: expected 1 to {LOOK_LANES}, "
                             f"found {lanes}")
        tile = self.tile_blocks
        if tile is not None and not 1 <= tile <= MAX_TILE_BLOCKS:
            raise ValueError(f"EmitterTuning.tile_blocks: expected 1 to {MAX_TILE_BLOCKS}, "
                             f"found {tile}")
        for name in ("ranks_threads", "one_pass_slot_limit", "workgroups_at_most",
                     "spawn_blocks_per_group"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"EmitterTuning.{name}: expected 1 or more, found {value}")


DEFAULT = EmitterTuning()
