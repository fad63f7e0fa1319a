// gas/feed.wgsl  --  pass `<entity>:gas:feed`
//
// At the start of the gas's step, what the emitters that feed it splatted during the last
// step (gas/splat.wgsl: integer atomics, FEED_SCALE units per unit) is added to each cell's
// density, temperature and fuel, and the accumulators are zeroed for the next step. Integer
// sums do not depend on the order the particles were added in, so two runs give the same
// bytes (WebGPU has no float atomics).
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 feed (rw: 3 u32 per cell: density,
//   temperature, fuel), 2 scalars (rw: density, temperature, fuel, -)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

// Fixed-point units per unit of density, temperature or fuel (systems/gas/feeds.py reads it).
const FEED_SCALE: f32 = 65536.0;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read_write> feed: array<u32>;
@group(0) @binding(2) var<storage, read_write> scalars: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let added = vec3u(feed[3u * i], feed[3u * i + 1u], feed[3u * i + 2u]);
    if (any(added != vec3u(0u))) {
        let s = scalars[i];
        scalars[i] = vec4f(s.xyz + vec3f(added) / FEED_SCALE, s.w);
        feed[3u * i] = 0u;
        feed[3u * i + 1u] = 0u;
        feed[3u * i + 2u] = 0u;
    }
}
