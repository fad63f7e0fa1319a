// emitter/event_write.wgsl  --  pass `<source>:emitter:events:write` (or `...:events:<target>:write`)
//
// The event links of emitter/event_tally.wgsl's pass (emitter/event_links.wgsl), after it: each
// source slot whose event bit of a link's kind is set (emitter/event_marks.wgsl) writes its
// particle's position and velocity, as the update left them this step, to its target's
// records at inbox.records_base + the link's record_base + its rank, the rank being its
// block's scanned offset minus the kind's first offset plus the set bits before it in its
// block: slot order, no atomics, the same records on every run. Ranks at or past the link's
// `stored` (its tally's) are dropped: the target has no births for them.
//
// Workgroup size 256 = one block of the source; dispatch ceil(capacity / 256) workgroups,
// folded into (x, y) past the per-dimension limit (block = y * nx + x, slot = block * 256 + lid).
// Overrides: those of emitter/event_links.wgsl.
// Bindings (group 0): 0 params (uniform: the source's EmitterParams),
//                     1 particles (rw, the source's: only read here, but bound read_write so
//                       the frame graph keeps this pass before the source's spawn, which reuses
//                       the slots of the dead; a plain reader would follow every writer),
//                     2 event_marks (read: the source's, counts scanned), 3 inboxes (read:
//                     EventInbox per target record), 4 records (rw: the targets'
//                     EventRecords, each target's from its inbox.records_base);
//                     group 1: those of emitter/event_color_write.wgsl, only where the target
//                     carries colour (systems/emitter/color.py)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl
//! include emitter/event_links.wgsl
//! include emitter/event_color.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> event_marks: array<u32>;
@group(0) @binding(3) var<storage, read> inboxes: array<EventInbox>;
@group(0) @binding(4) var<storage, read_write> records: array<EventRecord>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);
    let i = block * BLOCK + lid;
    if (i >= params.capacity) { return; }
    let blocks = params.block_count;
    let w = lid / 32u;
    let bit = 1u << (lid % 32u);
    for (var l = 0u; l < LINKS; l++) {
        let at = link_at(l);   // (kind, member, link)
        let segment = kind_segment(at.x);
        let words = countOneBits(SENT) * blocks + segment * blocks * BLOCK_WORDS
                    + block * BLOCK_WORDS;
        let word = event_marks[words + w];
        if ((word & bit) == 0u) { continue; }
        var rank = event_marks[segment * blocks + block] - event_marks[segment * blocks]
                   + countOneBits(word & (bit - 1u));
        for (var k = 0u; k < w; k++) { rank += countOneBits(event_marks[words + k]); }
        let link = inboxes[at.y].links[at.z];
        if (rank >= link.stored) { continue; }
        let p = particles[i];
        let record = inboxes[at.y].records_base + link.record_base + rank;
        records[record] = EventRecord(vec4f(p.position_age.xyz, 0.0),
                                      vec4f(p.velocity_lifetime.xyz, 0.0));
        write_event_color(i, p, record, l);   // (a target carrying colour: its record's colour)
    }
}
