// emitter/event_tally.wgsl  --  pass `<source>:emitter:events:tally` (or `...:events:<target>:tally`)
//
// The event links of one source emitter (each: its events of one kind spawning into a target)
// whose targets' inboxes and counters lie in the same two buffers (one target alone, or
// targets of one batch, each its own record of them), after the source's update marked its
// events and the scan ranked them (emitter/event_marks.wgsl has the layout). Link by link, in
// the host's order (death, collision, age): its events n = the scanned offset where its kind's
// segment ends minus the one where it starts. It stores min(n, quota) records after those of
// the links tallied before it into that target (the host lists those: sources in scene order,
// then death, collision, age), gives them the target's next birth ranks, count per record, by
// adding to the target's budget (saturating at 2^32 - 1; the ranks past the target's free
// slots are never born), and counts n in the source's counters (all n: events with no room are
// counted too). One invocation runs the links in order, as one pass each would.
//
// Workgroup size 1; dispatch (1, 1, 1).
// Overrides: SENT (the kinds the source marks, EVENT_KINDS of its update), LINKS (1 to 3),
// and per link l < LINKS: KIND<l> (EVENT_*), MEMBER<l> (its target's record in
// target_counters and inboxes), LINK<l> (its index in that inbox's links).
// Bindings (group 0): 0 params (uniform: the source's EmitterParams), 1 event_marks (read: the
//                     source's, counts scanned), 2 event_total (read: word 0 the scan's total),
//                     3 source_counters (rw), 4 target_counters (rw: Counters per target
//                     record; budget), 5 inboxes (rw: EventInbox per target record)

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl
//! include emitter/event_links.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read> event_marks: array<u32>;
@group(0) @binding(2) var<storage, read> event_total: array<u32>;
@group(0) @binding(3) var<storage, read_write> source_counters: Counters;
@group(0) @binding(4) var<storage, read_write> target_counters: array<Counters>;
@group(0) @binding(5) var<storage, read_write> inboxes: array<EventInbox>;

@compute @workgroup_size(1)
fn main() {
    let blocks = params.block_count;
    for (var l = 0u; l < LINKS; l++) {
        let at = link_at(l);   // (kind, member, link)
        let segment = kind_segment(at.x);
        var end = event_total[0];
        if (segment + 1u < countOneBits(SENT)) { end = event_marks[(segment + 1u) * blocks]; }
        let n = end - event_marks[segment * blocks];
        let link = inboxes[at.y].links[at.z];
        // quota <= ceil(target capacity / count), so stored x count < capacity + count < 2^30
        let stored = min(n, link.quota);
        let budget = atomicLoad(&target_counters[at.y].budget);
        let births = stored * link.count;
        inboxes[at.y].links[at.z].stored = stored;
        inboxes[at.y].links[at.z].record_base = inboxes[at.y].records;
        inboxes[at.y].links[at.z].birth_base = budget;
        inboxes[at.y].links[at.z].events = n;
        inboxes[at.y].records += stored;
        atomicStore(&target_counters[at.y].budget, select(budget + births, 0xffffffffu,
                                                           budget + births < budget));
        source_counters.events[at.x] = n;
        source_counters.event_totals[at.x] += n;
    }
}
