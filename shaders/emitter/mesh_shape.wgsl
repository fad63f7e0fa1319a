// emitter/mesh_shape.wgsl: births on or in a triangle mesh (shape.kind = "mesh"; no pass of its
// own).
//
// In place of emitter/shape_hook.wgsl (systems/emitter/mesh_shape.py swaps it in) in the passes
// that give births (emitter/update.wgsl, update_ranked.wgsl, spawn.wgsl, births.wgsl) of emitters with
// a mesh shape; a batch of such emitters shares one mesh (the batch key holds its digest), each
// emitter its own transform (EmitterParams.shape_x/y/z: rows of scale x rotation, offset in w).
//
// Surface (shape_surface = 1): a triangle by its area through a Walker alias table (one bucket
// draw and one coin draw, O(1)), then a uniform point on it (square-root barycentrics); the
// normal is the vertex normals interpolated there (the face normal on all three corners where
// the file has none).
// Volume (shape_surface = 0, a closed mesh): the mesh's triangles and one apex span signed
// tetrahedra; a tetrahedron by |volume| (a second alias table), a uniform point x in it. The ray
// from x away from the apex crosses m triangles, where m is the number of those tetrahedra that
// hold x; x is inside the mesh when m is odd. Accepting x with probability 1 / m then, and never
// when m is even, makes accepted points uniform over the mesh's volume, convex or not (the
// proposal's density at x is m / the tetrahedra's total volume). Each try costs one pass over
// the triangles; after MESH_VOLUME_TRIES refused tries the birth takes a surface point.
// Draws of the birth key: 9..12 (surface), 16 + 6 k .. 20 + 6 k for try k (volume): below the
// modifiers' (systems/emitter/modifier_code.py MODIFIER_DRAWS).
//
// Bindings (group 3): 0 mesh_shape (read: the apex and one MeshTriangle per triangle).

const HAS_MESH_SHAPE: bool = true;
const MESH_VOLUME_TRIES: u32 = 16u;

struct MeshTriangle {
    a: vec4f,    // xyz: corner, mesh units; w: surface alias threshold (own triangle below it)
    b: vec4f,    // xyz: corner; w: surface alias (a triangle index, as f32 bits)
    c: vec4f,    // xyz: corner; w: volume alias threshold
    na: vec4f,   // xyz: unit normal at a; w: volume alias (a triangle index, as f32 bits)
    nb: vec4f,   // xyz: unit normal at b
    nc: vec4f,   // xyz: unit normal at c
};

struct MeshShape {
    apex: vec4f,                       // xyz: the volume tetrahedra's common corner
    triangles: array<MeshTriangle>,
};

@group(3) @binding(0) var<storage, read> mesh_shape: MeshShape;

// A triangle index from an alias table: bucket u, coin w.
fn mesh_alias_pick(u: f32, w: f32, volume: bool) -> u32 {
    let n = arrayLength(&mesh_shape.triangles);
    let k = min(u32(u * f32(n)), n - 1u);
    let t = mesh_shape.triangles[k];
    if (volume) {
        return select(bitcast<u32>(t.na.w), k, w < t.c.w);
    }
    return select(bitcast<u32>(t.b.w), k, w < t.a.w);
}

// Crossings of the ray origin + s dir (s > 0) with the mesh's triangles (Moller-Trumbore).
fn mesh_crossings(origin: vec3f, dir: vec3f) -> u32 {
    var count = 0u;
    let n = arrayLength(&mesh_shape.triangles);
    for (var i = 0u; i < n; i++) {
        let t = mesh_shape.triangles[i];
        let e1 = t.b.xyz - t.a.xyz;
        let e2 = t.c.xyz - t.a.xyz;
        let p = cross(dir, e2);
        let det = dot(e1, p);
        if (abs(det) < 1e-20) { continue; }
        let inv = 1.0 / det;
        let s = origin - t.a.xyz;
        let u = dot(s, p) * inv;
        let q = cross(s, e1);
        let v = dot(dir, q) * inv;
        let along = dot(e2, q) * inv;
        if (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && along > 0.0) { count += 1u; }
    }
    return count;
}

// A point and its normal on the surface, mesh units.
fn mesh_surface_point(key: u32) -> array<vec3f, 2> {
    let t = mesh_shape.triangles[mesh_alias_pick(random01(key, 9u), random01(key, 10u), false)];
    let r = sqrt(random01(key, 11u));
    let s = random01(key, 12u);
    let w = vec3f(1.0 - r, r * (1.0 - s), r * s);
    let p = w.x * t.a.xyz + w.y * t.b.xyz + w.z * t.c.xyz;
    var normal = w.x * t.na.xyz + w.y * t.nb.xyz + w.z * t.nc.xyz;
    let face = cross(t.b.xyz - t.a.xyz, t.c.xyz - t.a.xyz);
    if (dot(normal, normal) < 1e-12) { normal = face; }
    return array<vec3f, 2>(p, normalize(normal));
}

// A uniform point of the volume, mesh units (a surface point after MESH_VOLUME_TRIES refusals).
fn mesh_volume_point(key: u32) -> array<vec3f, 2> {
    let apex = mesh_shape.apex.xyz;
    for (var k = 0u; k < MESH_VOLUME_TRIES; k++) {
        let d = 16u + 6u * k;
        let t = mesh_shape.triangles[mesh_alias_pick(random01(key, d), random01(key, d + 1u), true)];
        // uniform in the tetrahedron (apex, a, b, c): the unit cube folded into the unit simplex
        var s = random01(key, d + 2u);
        var r = random01(key, d + 3u);
        var u = random01(key, d + 4u);
        if (s + r > 1.0) { s = 1.0 - s; r = 1.0 - r; }
        if (r + u > 1.0) {
            let kept = u;
            u = 1.0 - s - r;
            r = 1.0 - kept;
        } else if (s + r + u > 1.0) {
            let kept = u;
            u = s + r + u - 1.0;
            s = 1.0 - r - kept;
        }
        let x = apex + s * (t.a.xyz - apex) + r * (t.b.xyz - apex) + u * (t.c.xyz - apex);
        let away = x - apex;
        if (dot(away, away) < 1e-24) { continue; }
        let m = mesh_crossings(x, normalize(away));
        // odd m: inside; kept with probability 1 / m (the draw after this try's five)
        if ((m & 1u) == 1u && random01(key, d + 5u) * f32(m) < 1.0) {
            return array<vec3f, 2>(x, normalize(away));
        }
    }
    return mesh_surface_point(key);
}

// A birth on or in the emitter's mesh, turned, scaled and moved by its transform rows; `outward`
// is the surface normal (velocity = "normal"), or the direction from the emitter's centre.
fn sample_mesh_shape(params: EmitterParams, key: u32) -> ShapeSample {
    var local: array<vec3f, 2>;
    if (params.shape_surface == 1u) {
        local = mesh_surface_point(key);
    } else {
        local = mesh_volume_point(key);
    }
    let m = mat3x3f(params.shape_x.xyz, params.shape_y.xyz, params.shape_z.xyz);  // rows as columns
    let offset = local[0] * m + vec3f(params.shape_x.w, params.shape_y.w, params.shape_z.w);
    let normal = normalize(local[1] * m);
    var out: ShapeSample;
    out.offset = offset;
    out.outward = normal;
    if (params.radial == 1u && dot(offset, offset) > 0.0) { out.outward = normalize(offset); }
    return out;
}
