// lights/cull.wgsl  --  pass `scene:lights:cull` (compute, RENDER phase, before the lit draws)
//
// Per LIGHT_TILE x LIGHT_TILE pixel tile of the image, the lights of lights/list whose sphere
// (centre, range) meets the tile's frustum: the four side planes through the tile's edges and
// the camera's near plane, each made from points unprojected through frame.inverse_view_proj
// (so perspective and orthographic cameras alike). A light is kept unless its centre lies
// farther than its range outside one plane (a conservative test: a kept light may still light
// none of the tile's pixels, a dropped one lights none).
// The kept lights are marked in a workgroup bit mask, then written in increasing index order
// (the scene's lights first), so a pixel sums the same lights in the same order every frame:
// lights/tiles holds per tile the count (at most TILE_LIGHTS), then the indices.
// Workgroup size CULL_THREADS; dispatch one workgroup per tile: (columns, rows, 1).
// Bindings (group 0): 0 frame (uniform Frame), 1 point_lights (read), 2 light_counts (read:
// LightCounts), 3 light_tiles (read_write).

//! include common/frame.wgsl
//! include common/point_light_types.wgsl

const CULL_THREADS: u32 = 64u;
const MASK_WORDS: u32 = LIGHT_CAPACITY / 32u;

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(2) var<storage, read> light_counts: LightCounts;
@group(0) @binding(3) var<storage, read_write> light_tiles: array<u32>;

var<workgroup> planes: array<vec4f, 5>;   // xyz: unit normal pointing into the tile; w: offset
var<workgroup> mask: array<atomic<u32>, MASK_WORDS>;
var<workgroup> offsets: array<u32, MASK_WORDS>;

// The world point at pixel coordinates `pixel` (y down) and depth `z` (0 near, 1 far).
fn unproject(pixel: vec2f, z: f32) -> vec3f {
    let ndc = vec2f(2.0 * pixel.x / frame.viewport.x - 1.0, 1.0 - 2.0 * pixel.y / frame.viewport.y);
    let h = frame.inverse_view_proj * vec4f(ndc, z, 1.0);
    return h.xyz / h.w;
}

// The plane through a, b and c, its normal turned toward `inside`.
fn plane_through(a: vec3f, b: vec3f, c: vec3f, inside: vec3f) -> vec4f {
    var n = normalize(cross(b - a, c - a));
    if (dot(n, inside - a) < 0.0) { n = -n; }
    return vec4f(n, -dot(n, a));
}

@compute @workgroup_size(CULL_THREADS)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lid: u32) {
    let tile = group.xy;
    let columns = (u32(frame.viewport.x) + LIGHT_TILE - 1u) / LIGHT_TILE;
    if (lid < MASK_WORDS) { atomicStore(&mask[lid], 0u); }
    if (lid == 0u) {
        let low = vec2f(tile * LIGHT_TILE);
        let high = min(vec2f((tile + 1u) * LIGHT_TILE), frame.viewport);
        let inside = unproject(0.5 * (low + high), 0.7);
        let z0 = 0.5;
        let z1 = 0.9;
        let a0 = unproject(low, z0);
        let a1 = unproject(low, z1);
        let b0 = unproject(vec2f(high.x, low.y), z0);
        let b1 = unproject(vec2f(high.x, low.y), z1);
        let c0 = unproject(high, z0);
        let c1 = unproject(high, z1);
        let d0 = unproject(vec2f(low.x, high.y), z0);
        let d1 = unproject(vec2f(low.x, high.y), z1);
        planes[0] = plane_through(a0, b0, a1, inside);   // top edge
        planes[1] = plane_through(b0, c0, b1, inside);   // right
        planes[2] = plane_through(c0, d0, c1, inside);   // bottom
        planes[3] = plane_through(d0, a0, d1, inside);   // left
        let n0 = unproject(low, 0.0);
        let n1 = unproject(vec2f(high.x, low.y), 0.0);
        let n2 = unproject(high, 0.0);
        planes[4] = plane_through(n0, n1, n2, inside);   // near
    }
    workgroupBarrier();
    let count = min(light_counts.scene + light_counts.appended, LIGHT_CAPACITY);
    for (var i = lid; i < count; i += CULL_THREADS) {
        let light = point_lights[i];
        let centre = light.position_range.xyz;
        let reach = light.position_range.w * 1.001 + 1e-4;
        var kept = reach > 0.0;
        for (var k = 0u; k < 5u; k++) {
            kept = kept && dot(planes[k].xyz, centre) + planes[k].w >= -reach;
        }
        if (kept) { atomicOr(&mask[i / 32u], 1u << (i % 32u)); }
    }
    workgroupBarrier();
    var bits = 0u;
    if (lid < MASK_WORDS) {
        bits = atomicLoad(&mask[lid]);
        offsets[lid] = countOneBits(bits);
    }
    workgroupBarrier();
    if (lid == 0u) {   // exclusive prefix sum of the words' counts (MASK_WORDS of them)
        var total = 0u;
        for (var w = 0u; w < MASK_WORDS; w++) {
            let c = offsets[w];
            offsets[w] = total;
            total += c;
        }
        light_tiles[(tile.y * columns + tile.x) * TILE_STRIDE] = min(total, TILE_LIGHTS);
    }
    workgroupBarrier();
    if (lid < MASK_WORDS) {
        let base = (tile.y * columns + tile.x) * TILE_STRIDE + 1u;
        var at = offsets[lid];
        var rest = bits;
        while (rest != 0u && at < TILE_LIGHTS) {
            let b = firstTrailingBit(rest);
            light_tiles[base + at] = lid * 32u + b;
            at += 1u;
            rest &= rest - 1u;
        }
    }
}
