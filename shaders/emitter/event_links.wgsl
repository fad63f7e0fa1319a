// emitter/event_links.wgsl: which event links a source's tally and write passes run
// (emitter/event_tally.wgsl, event_write.wgsl; no pass of its own). The host sets, per link
// l < LINKS in its order, KIND<l> (EVENT_*), MEMBER<l> (its target's record among the records
// the pass binds: 0 for a target alone, its place in its batch otherwise) and LINK<l> (its
// index in that target's inbox.links).

override SENT: u32 = 1u;    // the kinds the source marks (EVENT_KINDS of its update)
override LINKS: u32 = 1u;   // links in this pass, 1 to 3 (a source has one link per kind)
override KIND0: u32 = 0u;
override MEMBER0: u32 = 0u;
override LINK0: u32 = 0u;
override KIND1: u32 = 0u;
override MEMBER1: u32 = 0u;
override LINK1: u32 = 0u;
override KIND2: u32 = 0u;
override MEMBER2: u32 = 0u;
override LINK2: u32 = 0u;

// (kind, member, link) of link l
fn link_at(l: u32) -> vec3u {
    switch l {
        case 0u: { return vec3u(KIND0, MEMBER0, LINK0); }
        case 1u: { return vec3u(KIND1, MEMBER1, LINK1); }
        default: { return vec3u(KIND2, MEMBER2, LINK2); }
    }
}

// the kind's segment among the kinds the source marks (emitter/event_marks.wgsl)
fn kind_segment(kind: u32) -> u32 {
    return countOneBits(SENT & ((1u << kind) - 1u));
}
