// cloth/substep.wgsl: one explicit substep of one vertex (no pass of its own), shared by
// cloth/step.wgsl (a dispatch per substep) and cloth/step_resident.wgsl (every substep of a
// patch in one workgroup), so that both compute the very same operations.
//
// Forces: gravity, air drag, 12 springs (4 structural, 4 shear, 4 bend two apart; Hooke along
// the spring plus damping of the relative velocity along it, rest lengths from the initial
// layout) and wind through the vertex normal (0.6 area (n . w_rel)|n . w_rel| n,
// w_rel = wind - v). Then semi-implicit Euler (v += f / m h; x += v h), pins to their rest
// position + pin_offset, and colliders.
//
// The including pass declares `rest`, `forces` and `colliders`, the overrides HAS_WIND and
// HAS_COLLIDERS, sets `params` to the invocation's patch, and defines where the previous state
// is read: fn previous_position(k: u32) -> vec4f and fn previous_velocity(k: u32) -> vec4f.

//! include common/random.wgsl
//! include common/forces.wgsl
//! include common/colliders.wgsl
//! include cloth/types.wgsl

var<private> params: ClothParams;   // this invocation's patch

struct VertexState {
    position: vec4f,
    velocity: vec4f,
};

// Vertex (i, j) of this invocation's patch, clamped to its grid, in the bound arrays.
fn vertex_at(i: i32, j: i32) -> u32 {
    return params.first_vertex + grid_at(i, j, params);
}

fn spring(x: vec3f, v: vec3f, i: i32, j: i32, rest_length: f32) -> vec3f {
    if (i < 0 || j < 0 || i >= i32(params.nx) || j >= i32(params.ny)) { return vec3f(0.0); }
    let k = params.first_vertex + u32(j) * params.nx + u32(i);
    let d = previous_position(k).xyz - x;
    let len = length(d);
    if (len <= 0.0) { return vec3f(0.0); }
    let dir = d / len;
    let stretch = params.stiffness * (len - rest_length);
    let damp = params.damping * dot(previous_velocity(k).xyz - v, dir);
    return (stretch + damp) * dir;
}

// Vertex (i, j) of the patch after one substep of params.h.
fn next_state(i: i32, j: i32) -> VertexState {
    let idx = params.first_vertex + u32(j) * params.nx + u32(i);
    let anchor = rest[idx];
    if (anchor.w > 0.5) {
        return VertexState(vec4f(anchor.xyz + params.pin_offset.xyz, 1.0), vec4f(0.0));
    }
    let x = previous_position(idx).xyz;
    let v = previous_velocity(idx).xyz;
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
        let du = previous_position(vertex_at(i + 1, j)).xyz
            - previous_position(vertex_at(i - 1, j)).xyz;
        let dv = previous_position(vertex_at(i, j + 1)).xyz
            - previous_position(vertex_at(i, j - 1)).xyz;
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
    return VertexState(vec4f(contact.position, 1.0), vec4f(contact.velocity, 0.0));
}
