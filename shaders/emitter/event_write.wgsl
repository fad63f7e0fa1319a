// emitter/event_write.wgsl  --  pass `<source>:emitter:events:<kind>:write`
//
// Each source slot whose event bit of this kind is set (emitter/event_marks.wgsl) writes its
// particle's position and velocity, as the update left them this step, to the target's records
// at the link's record_base + its rank, the rank being its block's scanned offset minus the
// kind's first offset plus the set bits before it in its block: slot order, no atomics, the
// same records on every run. Ranks at or past the link's `stored` (its tally's) are dropped: the
// target has no births for them.
//
// Workgroup size 256 = one block of the source; dispatch ceil(capacity / 256) workgroups,
// folded into (x, y) past the per-dimension limit (block = y * nx + x, slot = block * 256 + lid).
// Bindings (group 0): 0 params (uniform: the source's EmitterParams),
//                     1 particles (rw, the source's: only read here, but bound read_write so
//                       the frame graph keeps this pass before the source's spawn, which reuses
//                       the slots of the dead; a plain reader would follow every writer),
//                     2 event_marks (read: the source's, counts scanned), 3 inbox (read: the
//                     target's EventInbox), 4 records (rw: the target's EventRecords)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl

override SEGMENT: u32 = 0u;    // the kind's segment among the source's
override SEGMENTS: u32 = 1u;   // segments the source marks
override LINK: u32 = 0u;       // index in the target's inbox.links

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> event_marks: array<u32>;
@group(0) @binding(3) var<storage, read> inbox: EventInbox;
@group(0) @binding(4) var<storage, read_write> records: array<EventRecord>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);
    let i = block * BLOCK + lid;
    if (i >= params.capacity) { return; }
    let blocks = params.block_count;
    let words = SEGMENTS * blocks + SEGMENT * blocks * BLOCK_WORDS + block * BLOCK_WORDS;
    let w = lid / 32u;
    let word = event_marks[words + w];
    let bit = 1u << (lid % 32u);
    if ((word & bit) == 0u) { return; }
    var rank = event_marks[SEGMENT * blocks + block] - event_marks[SEGMENT * blocks]
               + countOneBits(word & (bit - 1u));
    for (var k = 0u; k < w; k++) { rank += countOneBits(event_marks[words + k]); }
    let link = inbox.links[LINK];
    if (rank >= link.stored) { return; }
    let p = particles[i];
    records[link.record_base + rank] = EventRecord(vec4f(p.position_age.xyz, 0.0),
                                                   vec4f(p.velocity_lifetime.xyz, 0.0));
}
