// frame/gather.wgsl  --  pass `scene:frame:readback` (then `scene:frame:readback1`, ... where one
// dispatch cannot hold every region; compute, READBACK phase, steps with a readback, layouts of
// two regions or more: the ring slot copies a lone region itself, runtime/engine/telemetry.py)
//
// Copies the systems' readback regions (a counters record, a population word) into their places
// in the gather buffer, which the engine then copies into a ring slot to map
// (runtime/engine/telemetry.py). A compute pass rather than one copy_buffer_to_buffer a region:
// on the H200 a copy between compute passes cost the 1M-particle emitter step 5 us, against
// 2 us for this dispatch (measured; the copy most likely pays for the queue's switch from
// compute work to a transfer and back).
// One dispatch serves up to MAX_REGIONS regions from up to the number of `source<n>` bindings
// declared here (the host counts them); a region names its source by that number.
// Dispatch: one workgroup per region (x = the regions of this pass).
// Bindings (group 0): 0 gather (rw: the gather buffer, whole), 1 regions (uniform: Region per
//                     workgroup), 2-8 source0..source6 (read: a window of a buffer holding
//                     regions, from an offset the device allows; Region.source_word counts from
//                     the window's start; slots with no buffer of their own repeat the last
//                     slot that has one)

const MAX_REGIONS: u32 = 256u;
const GROUP: u32 = 64u;

struct Region {
    source: u32,        // which source<n> holds it
    source_word: u32,   // its first word in that source's window
    gather_word: u32,   // its first word in the gather buffer
    words: u32,
}

@group(0) @binding(0) var<storage, read_write> gather: array<u32>;
@group(0) @binding(1) var<uniform> regions: array<Region, MAX_REGIONS>;
@group(0) @binding(2) var<storage, read> source0: array<u32>;
@group(0) @binding(3) var<storage, read> source1: array<u32>;
@group(0) @binding(4) var<storage, read> source2: array<u32>;
@group(0) @binding(5) var<storage, read> source3: array<u32>;
@group(0) @binding(6) var<storage, read> source4: array<u32>;
@group(0) @binding(7) var<storage, read> source5: array<u32>;
@group(0) @binding(8) var<storage, read> source6: array<u32>;

// WGSL cannot index bindings, so the source is chosen by a switch
fn load(source: u32, word: u32) -> u32 {
    switch source {
        case 0u: { return source0[word]; }
        case 1u: { return source1[word]; }
        case 2u: { return source2[word]; }
        case 3u: { return source3[word]; }
        case 4u: { return source4[word]; }
        case 5u: { return source5[word]; }
        default: { return source6[word]; }
    }
}

@compute @workgroup_size(GROUP)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lid: u32) {
    let region = regions[group.x];
    for (var w = lid; w < region.words; w += GROUP) {
        gather[region.gather_word + w] = load(region.source, region.source_word + w);
    }
}
