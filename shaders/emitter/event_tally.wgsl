// emitter/event_tally.wgsl  --  pass `<source>:emitter:events:<kind>:tally`
//
// One event link (a source emitter's events of one kind spawning into a target emitter), after
// the source's update marked its events and the scan ranked them (emitter/event_marks.wgsl has
// the layout): the link's events n = the scanned offset where its kind's segment ends minus the
// one where it starts. It stores min(n, quota) records after those of the links tallied before
// it (the host lists them: sources in scene order, then death, collision, age), gives them the
// target's next birth ranks, count per record, by adding to the target's budget (saturating at
// 2^32 - 1; the ranks past the target's free slots are never born), and counts n in the
// source's counters (all n: events with no room are counted too).
//
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings (group 0): 0 params (uniform: the source's EmitterParams), 1 event_marks (read: the
//                     source's, counts scanned), 2 event_total (read: word 0 the scan's total),
//                     3 source_counters (rw), 4 target_counters (rw: budget),
//                     5 inbox (rw: the target's EventInbox)

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl

override SEGMENT: u32 = 0u;    // the kind's segment among the source's (emitter/event_marks.wgsl)
override SEGMENTS: u32 = 1u;   // segments the source marks (kinds it sends)
override KIND: u32 = 0u;       // EVENT_*
override LINK: u32 = 0u;       // index in the target's inbox.links

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read> event_marks: array<u32>;
@group(0) @binding(2) var<storage, read> event_total: array<u32>;
@group(0) @binding(3) var<storage, read_write> source_counters: Counters;
@group(0) @binding(4) var<storage, read_write> target_counters: Counters;
@group(0) @binding(5) var<storage, read_write> inbox: EventInbox;

@compute @workgroup_size(1)
fn main() {
    let blocks = params.block_count;
    var end = event_total[0];
    if (SEGMENT + 1u < SEGMENTS) { end = event_marks[(SEGMENT + 1u) * blocks]; }
    let n = end - event_marks[SEGMENT * blocks];
    let link = inbox.links[LINK];
    // quota <= ceil(target capacity / count), so stored x count < capacity + count < 2^30
    let stored = min(n, link.quota);
    let budget = atomicLoad(&target_counters.budget);
    let births = stored * link.count;
    inbox.links[LINK].stored = stored;
    inbox.links[LINK].record_base = inbox.records;
    inbox.links[LINK].birth_base = budget;
    inbox.links[LINK].events = n;
    inbox.records += stored;
    atomicStore(&target_counters.budget, select(budget + births, 0xffffffffu,
                                                 budget + births < budget));
    source_counters.events[KIND] = n;
    source_counters.event_totals[KIND] += n;
}
