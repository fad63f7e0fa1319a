// common/dispatch.wgsl  --  the folded 1-D dispatch index (no pass of its own)
//
// A 1-D dispatch of more workgroups than the per-dimension limit (65535) is folded by the host
// (GpuContext.grid) into (nx, ny) workgroups with nx * ny >= the count; the flat workgroup index
// is then workgroup_id.y * nx + workgroup_id.x, and the excess workgroups of the last row must
// bound-check like any tail. A pass includes this file and passes its builtins in:
//   @builtin(workgroup_id) wid, @builtin(num_workgroups) groups, @builtin(local_invocation_index) lid.
// No bindings.

// The flat index of this workgroup in a folded 1-D dispatch.
fn folded_workgroup(wid: vec3u, groups: vec3u) -> u32 {
    return wid.y * groups.x + wid.x;
}

// The flat index of this invocation in a folded 1-D dispatch of workgroups of `size` invocations.
fn folded_invocation(wid: vec3u, groups: vec3u, size: u32, lid: u32) -> u32 {
    return folded_workgroup(wid, groups) * size + lid;
}

// Every workgroup of a folded 1-D dispatch, those past the count included (a pass whose last
// workgroup to finish does something counts them).
fn folded_workgroup_count(groups: vec3u) -> u32 {
    return groups.x * groups.y * groups.z;
}
