// gas/light_sum.wgsl  --  pass `<entity>:gas:light:sum` (compute, RENDER phase; a gas whose
// look has fire_light > 0)
//
// The fire's light gathered for its point light: each workgroup sums, over its cells, the glow
// each emits (fire_intensity x glow(temperature) x the cell's volume, gas/glow.wgsl) and that
// glow's luminance times the cell's centre, and writes the two sums as its partial.
// gas/light.wgsl adds them up into one point light.
// One invocation per cell; workgroup size 256, dispatch ceil(cells / 256) workgroups, folded
// into (x, y) past the limit; every workgroup of the dispatch writes its partial.
// Bindings (group 0): 0 params (read GasParams), 1 look (read GasLook), 2 scalars (read),
//   3 blackbody (read), 4 partials (rw: 2 vec4f per workgroup: (rgb glow, luminance),
//   (luminance x centre, 0))

//! include common/dispatch.wgsl
//! include gas/types.wgsl
//! include gas/glow.wgsl
//! include gas/reduce.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> look: GasLook;
@group(0) @binding(2) var<storage, read> scalars: array<vec4f>;
@group(0) @binding(3) var<storage, read> blackbody: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> partials: array<vec4f>;

const WORKGROUP_SIZE: u32 = REDUCE_SIZE;
const LUMINANCE: vec3f = vec3f(0.2126, 0.7152, 0.0722);   // linear sRGB (Rec. 709)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    var own = vec4f(0.0);
    var at = vec4f(0.0);
    if (i < params.counts.y) {
        let h = params.lower.w;
        let rgb = look.light.y * glow(scalars[i].y) * (h * h * h);
        let luminance = dot(rgb, LUMINANCE);
        own = vec4f(rgb, luminance);
        let x = params.lower.xyz + (vec3f(cell_coords(i, params.cells.xyz)) + vec3f(0.5)) * h;
        at = vec4f(x * luminance, 0.0);
    }
    reduce_a[lid] = own;
    reduce_b[lid] = at;
    reduce_workgroup(lid);
    if (lid == 0u) {
        let w = folded_workgroup(wid, groups);
        partials[2u * w] = reduce_a[0];
        partials[2u * w + 1u] = reduce_b[0];
    }
}
