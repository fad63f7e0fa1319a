// common/volumes.wgsl: trilinear samples of volumes packed into one float array (no pass of its
// own). systems/forces/volumes.py packs the arrays and documents where each sample sits (the
// centre of a cell of the grid filling the volume's box); the including pass declares
//   var<storage, read> volumes: array<f32>;
// Weights are computed in full f32 precision from textureLoad-free buffer reads, so a sample
// matches a numpy trilinear sample to float rounding (hardware filtering has 8-bit weights, and
// r32float is not filterable on every adapter).

struct VolumeRef {
    center: vec4f,       // xyz: the box's centre, world units; w: 1 = tiled (repeats), 0 = clamped
    to_local_x: vec4f,   // rows of the world -> local rotation (the transpose of the box's R)
    to_local_y: vec4f,
    to_local_z: vec4f,
    size: vec4f,         // xyz: the box's full edge lengths, world units
    grid: vec4u,         // xyz: samples along local x, y, z (W, H, D); w: first float in volumes
};

// The local coordinates of a world point in the volume's box (centred on 0).
fn volume_local(ref_: VolumeRef, x: vec3f) -> vec3f {
    let r = x - ref_.center.xyz;
    return vec3f(dot(ref_.to_local_x.xyz, r), dot(ref_.to_local_y.xyz, r),
                 dot(ref_.to_local_z.xyz, r));
}

// Local direction -> world direction (the rotation's inverse is its transpose).
fn volume_world_direction(ref_: VolumeRef, d: vec3f) -> vec3f {
    return ref_.to_local_x.xyz * d.x + ref_.to_local_y.xyz * d.y + ref_.to_local_z.xyz * d.z;
}

fn volume_contains(ref_: VolumeRef, local: vec3f) -> bool {
    return all(abs(local) <= 0.5 * ref_.size.xyz);
}

// Index of a sample cell along one axis: wrapped when tiled, else clamped to the edge samples.
fn volume_cell(i: i32, n: u32, tiled: bool) -> u32 {
    let count = i32(n);
    if (tiled) { return u32(((i % count) + count) % count); }
    return u32(clamp(i, 0, count - 1));
}

// The 8 corner indices (flattened, in samples) and the fractional position of a local point.
struct Corners {
    index: array<u32, 8>,
    frac: vec3f,
};

fn volume_corners(ref_: VolumeRef, local: vec3f) -> Corners {
    let grid = vec3f(ref_.grid.xyz);
    let u = (local / ref_.size.xyz + 0.5) * grid - 0.5;
    let base = floor(u);
    var out: Corners;
    out.frac = u - base;
    let b = vec3i(base);
    let tiled = ref_.center.w > 0.5;
    for (var c = 0u; c < 8u; c++) {
        let i = volume_cell(b.x + i32(c & 1u), ref_.grid.x, tiled);
        let j = volume_cell(b.y + i32((c >> 1u) & 1u), ref_.grid.y, tiled);
        let k = volume_cell(b.z + i32((c >> 2u) & 1u), ref_.grid.z, tiled);
        out.index[c] = (k * ref_.grid.y + j) * ref_.grid.x + i;
    }
    return out;
}

fn corner_weight(frac: vec3f, c: u32) -> f32 {
    let pick = vec3<bool>((c & 1u) == 1u, ((c >> 1u) & 1u) == 1u, ((c >> 2u) & 1u) == 1u);
    let w = select(1.0 - frac, frac, pick);
    return w.x * w.y * w.z;
}

// A scalar volume (one float per sample) at a local point.
fn sample_scalar(ref_: VolumeRef, local: vec3f) -> f32 {
    let corners = volume_corners(ref_, local);
    var value = 0.0;
    for (var c = 0u; c < 8u; c++) {
        value += corner_weight(corners.frac, c) * volumes[ref_.grid.w + corners.index[c]];
    }
    return value;
}

// A vector volume (three floats per sample) at a local point.
fn sample_vector(ref_: VolumeRef, local: vec3f) -> vec3f {
    let corners = volume_corners(ref_, local);
    var value = vec3f(0.0);
    for (var c = 0u; c < 8u; c++) {
        let at = ref_.grid.w + 3u * corners.index[c];
        value += corner_weight(corners.frac, c) * vec3f(volumes[at], volumes[at + 1u],
                                                        volumes[at + 2u]);
    }
    return value;
}
