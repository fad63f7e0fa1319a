// cloth/step.wgsl  --  pass `<entity>:cloth:substeps` (solver = "explicit")
//
// One substep h for every vertex, reading the previous state and writing the other buffer (no
// vertex may see a neighbour already moved this substep). Forces: gravity, air drag, 12 springs
// (4 structural, 4 shear, 4 bend two apart; Hooke along the spring plus damping of the relative
// velocity along it, rest lengths from the initial layout) and wind through the vertex normal
// (0.6 area (n . w_rel)|n . w_rel| n, w_rel = wind - v). Then semi-implicit Euler
// (v += f / m h; x += v h), pins to their rest position + pin_offset, and colliders.
// Workgroup size (16, 16); dispatch (ceil(nx / 16), ceil(ny / 16), patches): z is the patch's
// entry in `records` (patches of one shape and substep count run as one batch over shared
// arenas; a lone patch is a batch of one over its own buffers), repeated `substeps` times in one
// compute pass with the two bind groups alternating.
// Bindings (group 0): 0 records (read: ClothRecord per patch), 1 pos_in, 2 vel_in (read),
//   3 pos_out, 4 vel_out (rw), 5 rest (read: initial position, w = 1 when pinned), 6 forces
//   (read), 7 colliders (read); a patch's arrays start at its params.first_vertex, its winds at
//   first_force, its colliders at first_collider.
// The parameters are storage, not a uniform: lavapipe (Mesa 22.x) "inlines" the uniform values
// a branch or loop bound depends on, JIT-compiling a fresh variant of the shader at every
// dispatch that rebinds the group and never freeing it (~0.5 MB and ~2 ms each). The counts are
// clamped to the buffer (arrayLength), which keeps a stale count in bounds.

//! include common/random.wgsl
//! include common/forces.wgsl
//! include common/colliders.wgsl
//! include cloth/types.wgsl

// Specialised per patch: false when no wind / no collider acts on it (the loops are compiled out).
override HAS_WIND: bool = true;
override HAS_COLLIDERS: bool = true;

@group(0) @binding(0) var<storage, read> records: array<ClothRecord>;
@group(0) @binding(1) var<storage, read> pos_in: array<vec4f>;
@group(0) @binding(2) var<storage, read> vel_in: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> pos_out: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> vel_out: array<vec4f>;
@group(0) @binding(5) var<storage, read> rest: array<vec4f>;
@group(0) @binding(6) var<storage, read> forces: array<Force>;
@group(0) @binding(7) var<storage, read> colliders: array<Collider>;

var<private> params: ClothParams;   // this invocation's patch

// Vertex (i, j) of this invocation's patch, clamped to its grid, in the bound arrays.
fn vertex_at(i: i32, j: i32) -> u32 {
    return params.first_vertex + grid_at(i, j, params);
}

fn spring(x: vec3f, v: vec3f, i: i32, j: i32, rest_length: f32) -> vec3f {
    if (i < 0 || j < 0 || i >= i32(params.nx) || j >= i32(params.ny)) { return vec3f(0.0); }
    let k = params.first_vertex + u32(j) * params.nx + u32(i);
    let d = pos_in[k].xyz - x;
    let len = length(d);
    if (len <= 0.0) { return vec3f(0.0); }
    let dir = d / len;
    let stretch = params.stiffness * (len - rest_length);
    let damp = params.damping * dot(vel_in[k].xyz - v, dir);
    return (stretch + damp) * dir;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    params = records[gid.z].params;
    if (gid.x >= params.nx || gid.y >= params.ny) { return; }
    let i = i32(gid.x);
    let j = i32(gid.y);
    let idx = params.first_vertex + gid.y * params.nx + gid.x;
    let anchor = rest[idx];
    if (anchor.w > 0.5) {
        pos_out[idx] = vec4f(anchor.xyz + params.pin_offset.xyz, 1.0);
        vel_out[idx] = vec4f(0.0);
        return;
    }
    let x = pos_in[idx].xyz;
    let v = vel_in[idx].xyz;
    let dx = params.rest.x;
    let dy = params.rest.y;
    let diag = params.rest.z;
    var f = params.mass * (params.gravity.xyz - params.gravity.w * v);
    f += spring(x, v, i + 1, j, dx) + spring(x, v, i - 1, j, dx);
    f += spring(x, v, i, j + 1, dy) + spring(x, v, i, j - 1, dy);
    f += spring(x, v, i + 1, j + 1, diag) + spring(x, v, i - 1, j - 1, diag);
    f += spring(x, v, i + 1, j - 1, diag) + spring(x, v, i - 1, j + 1, diag);
    f += spring(x, v, i + 2, j, 2.0 * dx) + spring(x, v, i - 2, j, 2.0 * dx);
    f += spring(x, v, i, j + 2, 2.0 * dy) + spring(x, v, i, j - 2, 2.0 * dy);
    let wind_count = min(params.force_count, arrayLength(&forces) - params.first_force);
    if (HAS_WIND && wind_count > 0u) {
        let du = pos_in[vertex_at(i + 1, j)].xyz - pos_in[vertex_at(i - 1, j)].xyz;
        let dv = pos_in[vertex_at(i, j + 1)].xyz - pos_in[vertex_at(i, j - 1)].xyz;
        let c = cross(du, dv);
        let n = select(vec3f(0.0, 0.0, 1.0), normalize(c), length(c) > 0.0);
        for (var k = 0u; k < wind_count; k++) {
            let w = forces[params.first_force + k];
            if (w.kind == FORCE_WIND) {
                let along = dot(n, w.a.xyz - v);
                f += 0.6 * params.rest.w * along * abs(along) * n;
            }
        }
    }
    let v_next = v + f / params.mass * params.h;
    var contact = Contact(x + v_next * params.h, v_next);
    if (HAS_COLLIDERS) {
        let collider_count = min(params.collider_count,
                                 arrayLength(&colliders) - params.first_collider);
        for (var k = 0u; k < collider_count; k++) {
            contact = resolve_collision(colliders[params.first_collider + k], contact.position,
                                        contact.velocity, 0.005);
        }
    }
    pos_out[idx] = vec4f(contact.position, 1.0);
    vel_out[idx] = vec4f(contact.velocity, 0.0);
}
