// emitter/fields.wgsl: the forces acting on particles, vector fields included (no pass of its
// own; emitter/update.wgsl sums emitter_force over its force records). A vector field samples
// its volume trilinearly (common/volumes.wgsl, whose bindings 9 and 10 the including pass
// gets). Its vectors are in the field box's local frame and turn
// with the box. Outside the box a field that does not tile does nothing.

//! include common/forces.wgsl
//! include common/volumes.wgsl

// false unless a vector field acts on the emitter: its sampling compiles out (compiled in, its
// registers slow the force loop even where no field is sampled)
override HAS_VECTOR_FIELDS: bool = true;

fn field_acceleration(f: Force, x: vec3f, v: vec3f) -> vec3f {
    let ref_ = volume_refs[u32(f.a.w)];
    let q = volume_local(ref_, x);
    if (ref_.center.w < 0.5 && !volume_contains(ref_, q)) { return vec3f(0.0); }
    let field = f.a.x * volume_world_direction(ref_, sample_vector(ref_, q));
    if (f.a.z > 0.5) { return f.a.y * (field - v); }   // velocity mode: pulled towards the field
    return field;
}

fn emitter_force(f: Force, x: vec3f, v: vec3f) -> vec3f {
    if (HAS_VECTOR_FIELDS && f.kind == FORCE_VECTOR_FIELD) { return field_acceleration(f, x, v); }
    return force_acceleration(f, x, v);
}
