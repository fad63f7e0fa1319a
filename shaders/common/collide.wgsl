// common/collide.wgsl: particles against solids (no pass of its own; emitter/update.wgsl calls
// collide_particle after each substep's position update, fluid/correct.wgsl after each solver
// iteration's correction). systems/colliders/particles.py packs the records.
// Bindings (group 0) of the including pass: 7 collision (read: CollisionSet), 8 colliders
// (read: SolidCollider records), 11 scene_depth (texture_depth_2d: what the last render drew),
// and 9, 10 of common/volumes.wgsl.
//
// Every shape gives a signed distance d (negative inside the solid) and an outward unit normal n
// at the particle. A particle with d < 0 moves back to the surface (x -= d n); its normal speed
// vn = v . n, if approaching (vn < 0), is reflected and scaled by the restitution e, and its
// tangential velocity loses friction x (1 + e)|vn| of its length (Coulomb), clamped at zero.

//! include common/volumes.wgsl

// SolidCollider.kind; the host maps each collider's shape (and sdf_kind) by these names.
const SOLID_SPHERE: u32 = 0u;
const SOLID_PLANE: u32 = 1u;
const SOLID_BOX: u32 = 2u;
const SOLID_SDF_VOLUME: u32 = 3u;   // signed distances sampled from volumes
const SOLID_SDF_SPHERE: u32 = 4u;   // analytic, within the sdf box
const SOLID_SDF_BOX: u32 = 5u;
const SOLID_SDF_TORUS: u32 = 6u;
const SOLID_DEPTH: u32 = 7u;        // what the last render drew into the depth target
const SDF_KINDS: u32 = 0x78u;       // bits of SOLID_SDF_VOLUME .. SOLID_SDF_TORUS
const ANALYTIC_SDF_KINDS: u32 = 0x70u;   // bits of SOLID_SDF_SPHERE .. SOLID_SDF_TORUS

struct SolidCollider {
    center: vec4f,       // xyz: centre (sphere, box, sdf box) or a point on the plane; w: radius
    normal: vec4f,       // plane: unit normal (the free side); w: torus tube radius
    half_size: vec4f,    // xyz: box half extents (box, sdf box shape) ; w: depth thickness
    to_local_x: vec4f,   // rows of the world -> local rotation (box, sdf)
    to_local_y: vec4f,
    to_local_z: vec4f,
    bounds: vec4f,       // sdf: half the edge lengths of the box the collider acts in
    kind: u32,           // SOLID_*
    inside: u32,         // 1: keep particles inside the shape
    volume: u32,         // SOLID_SDF_VOLUME: index into volume_refs
    pad: u32,
};

struct CollisionSet {
    material: vec4f,     // restitution, friction, lifetime loss, kill (1: dies on contact)
    view_proj: mat4x4f,  // the last render's world -> clip (column vectors)
    inverse_view_proj: mat4x4f,
    depth_size: vec4f,   // xy: depth target pixels; z: 1 once a render has drawn (else no depth)
    count: u32,          // records in colliders
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

struct Surface {
    distance: f32,   // signed: negative inside the solid; NO_CONTACT where the shape does not act
    normal: vec3f,   // outward unit normal
};

const NO_CONTACT: f32 = 3.0e38;

// Bit k set: colliders of kind k (SOLID_*) may act; the host compiles in only the kinds present,
// since CPU backends (lavapipe) run the code of every branch under a lane mask whether or not a
// lane takes it (one plane ran 30x slower with the SDF and depth code compiled in).
override SOLID_KINDS: u32 = 0xffu;

fn solids_include(kind: u32) -> bool {
    return (SOLID_KINDS & (1u << kind)) != 0u;
}

@group(0) @binding(7) var<storage, read> collision: CollisionSet;
@group(0) @binding(8) var<storage, read> colliders: array<SolidCollider>;
@group(0) @binding(11) var scene_depth: texture_depth_2d;

fn solid_local(c: SolidCollider, x: vec3f) -> vec3f {
    let r = x - c.center.xyz;
    return vec3f(dot(c.to_local_x.xyz, r), dot(c.to_local_y.xyz, r), dot(c.to_local_z.xyz, r));
}

fn solid_world_direction(c: SolidCollider, d: vec3f) -> vec3f {
    return c.to_local_x.xyz * d.x + c.to_local_y.xyz * d.y + c.to_local_z.xyz * d.z;
}

// The box SDF (exact outside and inside) of half extents h at local point q.
fn box_distance(q: vec3f, h: vec3f) -> f32 {
    let e = abs(q) - h;
    return length(max(e, vec3f(0.0))) + min(max(e.x, max(e.y, e.z)), 0.0);
}

// Analytic solids in the collider's local frame (sdf_kind).
fn analytic_distance(c: SolidCollider, q: vec3f) -> f32 {
    if (c.kind == SOLID_SDF_SPHERE) { return length(q) - c.center.w; }
    if (c.kind == SOLID_SDF_BOX) { return box_distance(q, c.half_size.xyz); }
    // torus around the local y axis: ring radius center.w, tube normal.w
    let ring = vec2f(length(q.xz) - c.center.w, q.y);
    return length(ring) - c.normal.w;
}

// An SDF collider's surface: distance sampled (trilinear) or analytic. The normal is the
// gradient: from an array, the trilinear sample's own (central differences of the samples across
// the cell, common/volumes.wgsl), which needs no further loads (six more trilinear samples for
// differences at +-1 cell would more than double what the SDF costs the update);
// analytic, central differences with a step of 1/32 of the smallest bound.
fn sdf_surface(c: SolidCollider, x: vec3f) -> Surface {
    let q = solid_local(c, x);
    if (any(abs(q) > c.bounds.xyz)) { return Surface(NO_CONTACT, vec3f(0.0)); }
    var g = vec3f(0.0);
    var d = 0.0;
    if (solids_include(SOLID_SDF_VOLUME) && c.kind == SOLID_SDF_VOLUME) {
        let ref_ = volume_refs[c.volume];
        if (c.inside == 0u) {   // far outside the surface: no fine sample needed
            let bound = coarse_bound(ref_, q);
            if (bound > 0.0) { return Surface(bound, vec3f(0.0)); }
        }
        d = sample_scalar(ref_, q);
        if (d >= 0.0 && c.inside == 0u) { return Surface(d, vec3f(0.0)); }   // no normal needed
        // the brick again (a cache hit) rather than kept live across the branch: fewer registers
        // for every particle; the few in contact pay a reload
        g = sample_gradient(ref_, q);
    } else if ((SOLID_KINDS & ANALYTIC_SDF_KINDS) != 0u) {
        d = analytic_distance(c, q);
        if (d >= 0.0 && c.inside == 0u) { return Surface(d, vec3f(0.0)); }
        let h = vec3f(min(c.bounds.x, min(c.bounds.y, c.bounds.z)) / 32.0);
        g = vec3f(analytic_distance(c, q + vec3f(h.x, 0.0, 0.0))
                      - analytic_distance(c, q - vec3f(h.x, 0.0, 0.0)),
                  analytic_distance(c, q + vec3f(0.0, h.y, 0.0))
                      - analytic_distance(c, q - vec3f(0.0, h.y, 0.0)),
                  analytic_distance(c, q + vec3f(0.0, 0.0, h.z))
                      - analytic_distance(c, q - vec3f(0.0, 0.0, h.z))) / (2.0 * h);
    }
    let n = select(vec3f(0.0, 1.0, 0.0), normalize(g), dot(g, g) > 0.0);
    return Surface(d, solid_world_direction(c, n));
}

// The surface the last render drew at the particle's pixel, as a plane through the drawn point
// with the normal of the depth differences; the particle collides when it is behind that point
// by less than the collider's thickness.
fn depth_surface(c: SolidCollider, x: vec3f) -> Surface {
    let none = Surface(NO_CONTACT, vec3f(0.0));
    if (collision.depth_size.z < 0.5) { return none; }
    let clip = collision.view_proj * vec4f(x, 1.0);
    if (clip.w <= 0.0) { return none; }
    let ndc = clip.xyz / clip.w;
    if (any(abs(ndc.xy) >= vec2f(1.0)) || ndc.z < 0.0 || ndc.z > 1.0) { return none; }
    let size = collision.depth_size.xy;
    let pixel = vec2i(floor(vec2f(ndc.x + 1.0, 1.0 - ndc.y) * 0.5 * size));
    let last = vec2i(size) - 1;
    let p = clamp(pixel, vec2i(0), last);
    let stored = textureLoad(scene_depth, p, 0);
    if (stored >= 1.0) { return none; }   // nothing drawn there
    let here = unproject(p, stored);
    // neighbours towards the inside of the image, for the depth-difference normal
    let sx = select(1, -1, p.x == last.x);
    let sy = select(1, -1, p.y == last.y);
    let right = unproject(p + vec2i(sx, 0), textureLoad(scene_depth, p + vec2i(sx, 0), 0));
    let down = unproject(p + vec2i(0, sy), textureLoad(scene_depth, p + vec2i(0, sy), 0));
    var n = cross((right - here) * f32(sx), (down - here) * f32(sy));
    if (dot(n, n) == 0.0) { return none; }
    n = normalize(n);
    let eye = collision.inverse_view_proj * vec4f(ndc.xy, 0.0, 1.0);
    if (dot(n, eye.xyz / eye.w - here) < 0.0) { n = -n; }   // faces the camera
    let d = dot(x - here, n);
    if (d < -c.half_size.w) { return none; }   // further behind than the thickness: not this
    return Surface(d, n);
}

fn unproject(pixel: vec2i, depth: f32) -> vec3f {
    let size = collision.depth_size.xy;
    let uv = (vec2f(pixel) + 0.5) / size;
    let ndc = vec4f(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, depth, 1.0);
    let world = collision.inverse_view_proj * ndc;
    return world.xyz / world.w;
}

// Collider k's surface at x. Plane and sphere read the fields they need only: loading the whole
// 128-byte record per particle and collider is what a CPU backend spends its time on.
fn solid_surface(k: u32, x: vec3f) -> Surface {
    let kind = colliders[k].kind;
    if (solids_include(SOLID_PLANE) && kind == SOLID_PLANE) {
        let n = colliders[k].normal.xyz;
        return Surface(dot(n, x - colliders[k].center.xyz), n);
    }
    if (solids_include(SOLID_SPHERE) && kind == SOLID_SPHERE) {
        let sphere = colliders[k].center;
        let r = x - sphere.xyz;
        let d = length(r);
        return Surface(d - sphere.w, select(vec3f(0.0, 1.0, 0.0), r / d, d > 0.0));
    }
    if (solids_include(SOLID_BOX) && kind == SOLID_BOX) { return box_surface(colliders[k], x); }
    if (solids_include(SOLID_DEPTH) && kind == SOLID_DEPTH) {
        return depth_surface(colliders[k], x);
    }
    if ((SOLID_KINDS & SDF_KINDS) != 0u) { return sdf_surface(colliders[k], x); }
    return Surface(NO_CONTACT, vec3f(0.0));
}

fn box_surface(c: SolidCollider, x: vec3f) -> Surface {
    let q = solid_local(c, x);
    let h = c.half_size.xyz;
    let e = abs(q) - h;
    var n = vec3f(0.0);
    if (any(e > vec3f(0.0))) {
        n = normalize(max(e, vec3f(0.0)) * sign(q));
    } else if (e.x >= e.y && e.x >= e.z) {   // inside: out through the nearest face
        n = vec3f(select(-1.0, 1.0, q.x >= 0.0), 0.0, 0.0);
    } else if (e.y >= e.z) {
        n = vec3f(0.0, select(-1.0, 1.0, q.y >= 0.0), 0.0);
    } else {
        n = vec3f(0.0, 0.0, select(-1.0, 1.0, q.z >= 0.0));
    }
    return Surface(box_distance(q, h), solid_world_direction(c, n));
}

struct Motion {
    position: vec3f,
    velocity: vec3f,
    collided: bool,
};

// One particle against every collider, in order: pushed out of (or, inside = 1, back into) each
// solid it has entered, with the collision response on its velocity.
fn collide_particle(x_in: vec3f, v_in: vec3f) -> Motion {
    var m = Motion(x_in, v_in, false);
    let restitution = collision.material.x;
    let friction = collision.material.y;
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, m.position);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance >= 0.0) { continue; }
        let n = s.normal;
        m.position -= s.distance * n;
        m.collided = true;
        let vn = dot(m.velocity, n);
        if (vn < 0.0) {
            let tangential = m.velocity - vn * n;
            let speed = length(tangential);
            let change = (1.0 + restitution) * -vn;   // the normal speed change
            var keep = 0.0;
            if (speed > 0.0) { keep = max(0.0, 1.0 - friction * change / speed); }
            m.velocity = tangential * keep - restitution * vn * n;
        }
    }
    return m;
}
