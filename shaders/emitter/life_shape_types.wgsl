// emitter/life_shape_types.wgsl: the LifeShape buffer (a header, then the list) of an emitter whose births come from a
// Life layer's cells (shape.kind = "life"; no pass of its own).
//
// Included by emitter/life_cells.wgsl (which lists the eligible cells each step) and
// emitter/life_shape.wgsl (which places births in them). The host writes the placement and the
// mode (systems/emitter/life_shape.py, every step: the layer's quad may move); the list pass
// writes `count`, `primed` and `cells`.

struct LifeShapeHeader {
    corner: vec4f,   // xyz: world position of cell (0, 0)'s top-left corner (the quad's)
    cell: vec4f,     // x: a cell's width along +x, y: its height along -y (world units)
    width: u32,      // cells per row
    height: u32,     // rows
    stride: u32,     // u32 words per row of the layer's bit-packed state
    on: u32,         // LIFE_ON_* below
    count: u32,      // eligible cells listed this step
    primed: u32,     // 1 once `previous` holds a state of the layer
    words: u32,      // words of state the list pass reads (stride x height, as built)
    pad: u32,
};

struct LifeShape {
    head: LifeShapeHeader,
    cells: array<u32>,   // the eligible cells in cell order, y * width + x; head.count of them
};

// What makes a cell eligible (LifeShape.on; the host maps shape.on by name).
const LIFE_ON_BIRTH: u32 = 0u;   // alive now, dead in the previous displayed state
const LIFE_ON_ALIVE: u32 = 1u;   // alive now
