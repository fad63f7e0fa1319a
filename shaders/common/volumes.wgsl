// common/volumes.wgsl: trilinear samples of volumes packed into one float array (no pass of its
// own). systems/forces/volumes.py packs the arrays and documents where each sample sits (the
// centre of a cell of the grid filling the volume's box).
// Bindings (group 0) of every pass including it: 9 volume_refs (read: VolumeRef per volume),
// 10 volumes (read: every volume's samples, packed).
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

@group(0) @binding(9) var<storage, read> volume_refs: array<VolumeRef>;
@group(0) @binding(10) var<storage, read> volumes: array<f32>;

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

// The cell indices below and above a local point along each axis, and the fraction between.
struct Cell {
    low: vec3u,
    high: vec3u,
    frac: vec3f,
};

fn volume_cell_of(ref_: VolumeRef, local: vec3f) -> Cell {
    let u = (local / ref_.size.xyz + 0.5) * vec3f(ref_.grid.xyz) - 0.5;
    let base = floor(u);
    let b = vec3i(base);
    let tiled = ref_.center.w > 0.5;
    let low = vec3u(volume_cell(b.x, ref_.grid.x, tiled), volume_cell(b.y, ref_.grid.y, tiled),
                    volume_cell(b.z, ref_.grid.z, tiled));
    let high = vec3u(volume_cell(b.x + 1, ref_.grid.x, tiled),
                     volume_cell(b.y + 1, ref_.grid.y, tiled),
                     volume_cell(b.z + 1, ref_.grid.z, tiled));
    return Cell(low, high, u - base);
}

// The flattened sample index of cell (i, j, k).
fn volume_index(ref_: VolumeRef, i: u32, j: u32, k: u32) -> u32 {
    return (k * ref_.grid.y + j) * ref_.grid.x + i;
}

// A scalar volume at a local point, clamped at its edges. Scalar volumes are packed as corner
// bricks (systems/forces/volumes.py corner_bricks): cell (i, j, k)'s eight corner samples lie
// side by side, so one sample reads 32 contiguous bytes.
fn sample_scalar(ref_: VolumeRef, local: vec3f) -> f32 {
    let grid = vec3f(ref_.grid.xyz);
    let u = clamp((local / ref_.size.xyz + 0.5) * grid - 0.5, vec3f(0.0), grid - 1.0);
    let base = min(floor(u), max(grid - 2.0, vec3f(0.0)));
    let f = u - base;
    let cell = vec3u(base);
    let at = ref_.grid.w + 8u * volume_index(ref_, cell.x, cell.y, cell.z);
    let v000 = volumes[at];
    let v100 = volumes[at + 1u];
    let v010 = volumes[at + 2u];
    let v110 = volumes[at + 3u];
    let v001 = volumes[at + 4u];
    let v101 = volumes[at + 5u];
    let v011 = volumes[at + 6u];
    let v111 = volumes[at + 7u];
    return mix(mix(mix(v000, v100, f.x), mix(v010, v110, f.x), f.y),
               mix(mix(v001, v101, f.x), mix(v011, v111, f.x), f.y), f.z);
}

fn volume_vector(at: u32) -> vec3f {
    return vec3f(volumes[3u * at], volumes[3u * at + 1u], volumes[3u * at + 2u]);
}

// A vector volume (three floats per sample) at a local point.
fn sample_vector(ref_: VolumeRef, local: vec3f) -> vec3f {
    let c = volume_cell_of(ref_, local);
    let o = ref_.grid.w / 3u;   // volumes start at a multiple of 3 floats (the host packs)
    let v000 = volume_vector(o + volume_index(ref_, c.low.x, c.low.y, c.low.z));
    let v100 = volume_vector(o + volume_index(ref_, c.high.x, c.low.y, c.low.z));
    let v010 = volume_vector(o + volume_index(ref_, c.low.x, c.high.y, c.low.z));
    let v110 = volume_vector(o + volume_index(ref_, c.high.x, c.high.y, c.low.z));
    let v001 = volume_vector(o + volume_index(ref_, c.low.x, c.low.y, c.high.z));
    let v101 = volume_vector(o + volume_index(ref_, c.high.x, c.low.y, c.high.z));
    let v011 = volume_vector(o + volume_index(ref_, c.low.x, c.high.y, c.high.z));
    let v111 = volume_vector(o + volume_index(ref_, c.high.x, c.high.y, c.high.z));
    let f = c.frac;
    return mix(mix(mix(v000, v100, f.x), mix(v010, v110, f.x), f.y),
               mix(mix(v001, v101, f.x), mix(v011, v111, f.x), f.y), f.z);
}
