// common/colliders.wgsl: solids that simulated vertices must stay out of (no pass of its own;
// systems/forces/forces.py packs the records).
//
// kind 0 sphere: shape = (centre xyz, radius); kind 1 plane: shape = (unit normal xyz, offset d)
// with the allowed side n . x >= d.

// Collider.kind; the host (systems/forces/forces.py) maps each collider's shape by these names.
const COLLIDER_SPHERE: u32 = 0u;
const COLLIDER_PLANE: u32 = 1u;

struct Collider {
    shape: vec4f,
    kind: u32,
    friction: f32,
};

struct Contact {
    position: vec3f,
    velocity: vec3f,
};

// Moves a point found inside a collider to its surface (plus `margin`), removes the velocity
// component into it and `friction` of the tangential part.
fn resolve_collision(c: Collider, x: vec3f, v: vec3f, margin: f32) -> Contact {
    var n = vec3f(0.0);
    var depth = 0.0;
    if (c.kind == COLLIDER_SPHERE) {
        let r = x - c.shape.xyz;
        let d = length(r);
        depth = c.shape.w + margin - d;
        n = select(vec3f(0.0, 1.0, 0.0), r / d, d > 0.0);
    } else {
        n = c.shape.xyz;
        depth = c.shape.w + margin - dot(n, x);
    }
    if (depth <= 0.0) { return Contact(x, v); }
    let vn = dot(v, n);
    var tangential = v - vn * n;
    tangential *= 1.0 - c.friction;
    return Contact(x + n * depth, tangential + max(vn, 0.0) * n);
}
