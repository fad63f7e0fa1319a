// bench/neighbours_count.wgsl  --  pass `bench:neighbours:count` (emberfx bench neighbours only)
//
// The neighbour query alone: for every point of a neighbour grid, in slot (cell) order, the
// number of points within `radius` (itself included), through the walk of
// common/neighbours_query.wgsl. One invocation per point, no atomics; counts[k] belongs to the
// point at slot k (neighbour_index(k)).
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 query (uniform CountParams), 1 counts (rw, count u32); group 1: the
//   grid's (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include common/neighbours_query.wgsl

struct CountParams {
    radius: f32,
    count: u32,
    _unused0: u32,
    _unused1: u32,
};

@group(0) @binding(0) var<uniform> query: CountParams;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let k = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (k >= query.count) { return; }
    let x = neighbour_position(k);
    let r2 = query.radius * query.radius;
    var n = 0u;
    var walk = neighbour_walk(x);
    while (neighbour_next(&walk)) {
        let d = neighbour_position(walk.slot) - x;
        n += u32(dot(d, d) < r2);
    }
    counts[k] = n;
}
