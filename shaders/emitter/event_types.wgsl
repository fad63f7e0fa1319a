// emitter/event_types.wgsl: GPU events between emitters (no pass of its own).
//
// A source emitter's update marks, per slot, the events of this step (emitter/event_marks.wgsl);
// a scan ranks them in slot order; per link (one source and one event kind naming a target) a
// tally (emitter/event_tally.wgsl) reserves the link's records and births in the target's inbox,
// and a write (emitter/event_write.wgsl) stores each event's record at its rank. The target's
// spawn (emitter/spawn.wgsl) then gives `count` births per record. Included by those passes;
// Python reads these declarations (systems/emitter/events.py) to size and fill the buffers.

// Event kinds, in the order an emitter's events are ranked and counted (Counters.events); the
// host names them death, collision, age (EVENT_KINDS in systems/emitter/component.py).
const EVENT_DEATH: u32 = 0u;
const EVENT_COLLISION: u32 = 1u;
const EVENT_AGE: u32 = 2u;

// Links one target can take (the size of EventInbox.links).
const MAX_EVENT_LINKS: u32 = 8u;

// Where the parent particle was after its update this step, and its velocity (w unused).
struct EventRecord {
    position: vec4f,
    velocity: vec4f,
};

// One link into a target. The host writes count, quota and inherit before each step and zeroes
// the rest; the link's tally fills in the rest on the GPU.
struct EventLink {
    count: u32,          // births per event
    quota: u32,          // records this link may store: min(source capacity, ceil(target
                         // capacity / count)); more events could not be born
    inherit: f32,        // share of the parent's velocity added to a child's own
    stored: u32,         // records stored this step: min(events, quota)
    record_base: u32,    // its first record in the target's records
    birth_base: u32,     // its first birth's rank among the target's free slots this step
    events: u32,         // events sent over the link this step (all of them, stored or not)
    unused: u32,
};

// The target's side: written by the host before each step (host_budget, link_count,
// records_base, the links' host fields), then by the tallies of the links, in the order the host
// lists them (sources in scene order, then death, collision, age). Padded to 512 bytes: in a
// batch of emitters each member's inbox is a view at a 256-byte-aligned offset of the batch's
// inbox arena, which the batch's spawn reads as array<EventInbox> indexed by the block's emitter.
struct EventInbox {
    host_budget: u32,    // births ranked before any event's: the target's rate, bursts, scripts
    link_count: u32,
    records: u32,        // records stored so far this step
    records_base: u32,   // where the target's records start in the buffer its spawn binds (0
                         // alone; in a batch, its region of the batch's records arena)
    links: array<EventLink, 8>,
    padding: array<vec4u, 15>,
};
