// common/volumes.wgsl: trilinear samples of volumes packed into one float array (no pass of its
// own). systems/forces/volumes.py packs the arrays and documents where each sample sits (the
// centre of a cell of the grid filling the volume's box).
// Bindings (group 0) of every pass including it: 9 volume_refs (read: VolumeRef per volume),
// 10 volumes (read: every volume's samples, packed, as vec4s).
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
// as vec4s: a corner brick is two 16-byte loads (eight 4-byte ones cost an H200's update more)
@group(0) @binding(10) var<storage, read> volumes: array<vec4f>;

fn volume_float(i: u32) -> f32 {
    return volumes[i >> 2u][i & 3u];
}

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
// The wrap takes remainders of non-negative operands only: an NVIDIA H100 through Vulkan gave
// `i % n` of a negative i32 as if both were unsigned (right only where n is a power of two).
fn volume_cell(i: i32, n: u32, tiled: bool) -> u32 {
    if (tiled) {
        if (i >= 0) { return u32(i) % n; }
        return n - 1u - u32(-(i + 1)) % n;
    }
    return u32(clamp(i, 0, i32(n) - 1));
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

// Where a local point falls in a scalar volume's sample grid, clamped to its edge samples.
fn scalar_position(ref_: VolumeRef, local: vec3f) -> vec3f {
    let grid = vec3f(ref_.grid.xyz);
    return clamp((local / ref_.size.xyz + 0.5) * grid - 0.5, vec3f(0.0), grid - 1.0);
}

// A lower bound of a scalar volume's trilinear sample at a local point: the smallest corner
// sample of the coarse cell (COARSE^3 fine cells) around it, stored after the bricks
// (systems/forces/volumes.py coarse_minimum). Small enough to stay in cache for every thread.
const COARSE: f32 = 8.0;

fn coarse_bound(ref_: VolumeRef, local: vec3f) -> f32 {
    let cells = max(ceil((vec3f(ref_.grid.xyz) - 1.0) / COARSE), vec3f(1.0));
    let c = vec3u(min(floor(scalar_position(ref_, local) / COARSE), cells - 1.0));
    let count = vec3u(cells);
    let bricks = 8u * ref_.grid.x * ref_.grid.y * ref_.grid.z;
    return volume_float(ref_.grid.w + bricks + (c.z * count.y + c.y) * count.x + c.x);
}

// The corner samples of the cell around a local point of a scalar volume, clamped at its edges,
// and the point's fractions within the cell. Scalar volumes are packed as corner bricks
// (systems/forces/volumes.py corner_bricks): cell (i, j, k)'s eight corner samples lie side by
// side, so one sample reads 32 contiguous bytes.
struct Brick {
    near: vec4f,   // corners (0,0,0) (1,0,0) (0,1,0) (1,1,0)
    far: vec4f,    // the same at z + 1
    frac: vec3f,
};

fn scalar_brick(ref_: VolumeRef, local: vec3f) -> Brick {
    let u = scalar_position(ref_, local);
    let base = min(floor(u), max(vec3f(ref_.grid.xyz) - 2.0, vec3f(0.0)));
    let cell = vec3u(base);
    // offsets are multiples of 24 floats and a brick is 8: both whole vec4s
    let at = (ref_.grid.w + 8u * volume_index(ref_, cell.x, cell.y, cell.z)) >> 2u;
    return Brick(volumes[at], volumes[at + 1u], u - base);
}

// A scalar volume at a local point (the trilinear sample), clamped at its edges.
fn sample_scalar(ref_: VolumeRef, local: vec3f) -> f32 {
    let b = scalar_brick(ref_, local);
    let f = b.frac;
    return mix(mix(mix(b.near.x, b.near.y, f.x), mix(b.near.z, b.near.w, f.x), f.y),
               mix(mix(b.far.x, b.far.y, f.x), mix(b.far.z, b.far.w, f.x), f.y), f.z);
}

// The trilinear sample's gradient, per world unit in the box's frame: central differences of the
// samples across the cell (centred on its mid-planes), blended over the other two axes like the
// value; it reads the same brick.
fn sample_gradient(ref_: VolumeRef, local: vec3f) -> vec3f {
    let b = scalar_brick(ref_, local);
    let n = b.near;
    let r = b.far;
    let f = b.frac;
    let dx = mix(mix(n.y - n.x, n.w - n.z, f.y), mix(r.y - r.x, r.w - r.z, f.y), f.z);
    let dy = mix(mix(n.z - n.x, n.w - n.y, f.x), mix(r.z - r.x, r.w - r.y, f.x), f.z);
    let dz = mix(mix(r.x - n.x, r.y - n.y, f.x), mix(r.z - n.z, r.w - n.w, f.x), f.y);
    return vec3f(dx, dy, dz) * vec3f(ref_.grid.xyz) / ref_.size.xyz;
}

fn volume_vector(at: u32) -> vec3f {
    return vec3f(volume_float(3u * at), volume_float(3u * at + 1u), volume_float(3u * at + 2u));
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
