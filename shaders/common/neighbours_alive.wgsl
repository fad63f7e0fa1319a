// common/neighbours_alive.wgsl: which points of a neighbour grid are alive, included by
// common/neighbours_assign.wgsl after its bindings (no pass or bindings of its own). Every point
// is, by default; a family whose points buffer holds dead slots swaps in its own test
// (NeighbourGrid's `alive`), reading `points` and `grid` of the assign pass.

fn point_alive(i: u32) -> bool {
    return true;
}
