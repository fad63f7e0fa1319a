// life/swar.wgsl: bit-sliced Life arithmetic shared by the step passes (no pass of its own).
//
// A u32 holds 32 cells (bit j = cell word * 32 + j). A word's 8 neighbour counts are added as
// bit-sliced numbers with carry-save adders: four words sb0..sb3 hold bit 0..3 of all
// 32 counts. Any Life-like rule then follows from which counts (0..8) give birth or survival:
// BIRTH and SURVIVE are bit masks over the counts, set per pipeline as override constants, so the
// loop over counts folds away at pipeline creation.

override BIRTH: u32 = 8u;      // bit n: a dead cell with n live neighbours is born (B3)
override SURVIVE: u32 = 12u;   // bit n: a live cell with n live neighbours stays (S23)

struct LifeParams {
    width: u32,    // cells per row
    height: u32,   // rows
    stride: u32,   // words per row = ceil(width / 32)
    tiles_x: u32,  // in-place mode: tiles per row of tiles
    torus: u32,    // 1: wrap both edges; 0: cells beyond the edges are dead
};

// One row of a word's neighbourhood: the word and its cells shifted to their west/east neighbour.
struct Row {
    cells: u32,
    west: u32,   // bit j = the west neighbour of cell j
    east: u32,   // bit j = the east neighbour of cell j
};

// `left` and `right` are the words before and after `mid` in its row (wrapped for a torus, 0 past
// a dead edge). West neighbours come from mid << 1 with bit 0 from `left`, east neighbours from
// mid >> 1 with bit 31 from `right`. On a torus whose last word is ragged (width % 32 = r > 0),
// the wrap partner of cell 0 is bit r - 1 of the last word and that of the last cell is bit 0 of
// the first word, so the shifts change instead of patching bits: left >> (r - 1) and
// right << (r - 1). Padding bits are zero, so nothing else moves in. (Seed 001 instead patches
// the two bits after the shifts; llvmpipe/LLVM 15 miscompiled that form once make_row was
// inlined three times into the step, on Vulkan and GL alike, so this branch-free form is used.)
fn make_row(mid: u32, left: u32, right: u32, word: u32, width: u32, torus: bool) -> Row {
    let b = (width - 1u) % 32u;
    let west_shift = select(31u, b, torus && word == 0u);
    let east_shift = select(31u, b, torus && word == (width - 1u) / 32u);
    return Row(mid, (mid << 1u) | (left >> west_shift), (mid >> 1u) | (right << east_shift));
}

struct Adder {
    sum: u32,
    carry: u32,
};

fn full_add(a: u32, b: u32, c: u32) -> Adder {
    let t = a ^ b;
    return Adder(t ^ c, (a & b) | (c & t));
}

fn half_add(a: u32, b: u32) -> Adder {
    return Adder(a ^ b, a & b);
}

// All-ones when `rule` has count n, else zero: a constant once the override is known.
fn has(rule: u32, n: u32) -> u32 {
    return select(0u, 0xffffffffu, ((rule >> n) & 1u) != 0u);
}

// The cells whose count is in `rule`: a three-level multiplexer over sb0, sb1, sb2 picking the
// rule's entries for counts 0..7, and sb3 (set only for a count of 8) choosing entry 8. With the
// rule constant, each level folds to a few bit operations; no loop and no branch.
fn in_rule(rule: u32, sb0: u32, sb1: u32, sb2: u32, sb3: u32) -> u32 {
    let m01 = (sb0 & has(rule, 1u)) | (~sb0 & has(rule, 0u));
    let m23 = (sb0 & has(rule, 3u)) | (~sb0 & has(rule, 2u));
    let m45 = (sb0 & has(rule, 5u)) | (~sb0 & has(rule, 4u));
    let m67 = (sb0 & has(rule, 7u)) | (~sb0 & has(rule, 6u));
    let m03 = (sb1 & m23) | (~sb1 & m01);
    let m47 = (sb1 & m67) | (~sb1 & m45);
    let m07 = (sb2 & m47) | (~sb2 & m03);
    return (~sb3 & m07) | (sb3 & has(rule, 8u));
}

// A row's part of its neighbours' counts, computed once per row: the bit-sliced sum of its
// west, own and east cells (what it adds to the rows above and below) and of its west and east
// cells (what it adds to its own row), each as sum and carry bits.
struct RowSums {
    cells: u32,
    sum3: u32,
    carry3: u32,
    sum2: u32,
    carry2: u32,
};

fn row_sums(r: Row) -> RowSums {
    let three = full_add(r.west, r.cells, r.east);
    let two = half_add(r.west, r.east);
    return RowSums(r.cells, three.sum, three.carry, two.sum, two.carry);
}

// The next generation of the cells of `mid`, given the sums of the rows above and below.
fn next_from_sums(up: RowSums, mid: RowSums, down: RowSums) -> u32 {
    let d = full_add(up.sum3, down.sum3, mid.sum2);
    let e = full_add(up.carry3, down.carry3, mid.carry2);
    let f = half_add(e.sum, d.carry);
    let sb0 = d.sum;
    let sb1 = f.sum;
    let sb2 = e.carry ^ f.carry;
    let sb3 = e.carry & f.carry;
    let born = in_rule(BIRTH, sb0, sb1, sb2, sb3);
    let stay = in_rule(SURVIVE, sb0, sb1, sb2, sb3);
    return (~mid.cells & born) | (mid.cells & stay);
}

// The next generation of the word in row `mid`, given the rows above and below.
fn next_word(up: Row, mid: Row, down: Row) -> u32 {
    return next_from_sums(row_sums(up), row_sums(mid), row_sums(down));
}

// Bits of real cells in a word (the last word of a ragged row keeps its padding bits zero).
fn word_mask(word: u32, p: LifeParams) -> u32 {
    let cells = min(p.width - word * 32u, 32u);
    return select((1u << cells) - 1u, 0xffffffffu, cells == 32u);
}

// ---- block totals: the 3x3 block's live cells, the cell itself included (0..9)
//
// A cheaper count for the sweep: each row contributes the bit-sliced sum of its west, own and
// east cells (one full adder, values 0..3), and a cell's block total is the sum of three such
// rows: two more full adders. Counting the cell itself costs nothing extra and leaves one
// kind of row sum instead of two; the rule then reads "born at total n" for B n and "stays at
// total n + 1" for S n.
struct BlockRow {
    cells: u32,
    ones: u32,   // bit 0 of west + cells + east
    twos: u32,   // bit 1
};

fn block_row(r: Row) -> BlockRow {
    let three = full_add(r.west, r.cells, r.east);
    return BlockRow(r.cells, three.sum, three.carry);
}

// The next state of a cell whose block total is `n`: a birth if B has n, survival if S has
// n - 1. All-ones, all-zeros, `cells` or `~cells`: a constant choice once the overrides are known.
fn block_entry(n: u32, cells: u32) -> u32 {
    let born = ((BIRTH >> n) & 1u) != 0u;
    let stays = (((SURVIVE << 1u) >> n) & 1u) != 0u;
    return select(select(0u, cells, stays), select(~cells, 0xffffffffu, stays), born);
}

// The next generation of `mid`'s cells from the rows above and below. total = odd + 2 * pairs,
// pairs = twos.sum + ones.carry + 2 * twos.carry (0..4); each value of `pairs` has a cheap
// indicator, and only the rule's totals survive constant folding (B3/S23: pairs == 1 with odd
// set, or pairs == 2 without it and a live cell).
fn next_from_block_rows(up: BlockRow, mid: BlockRow, down: BlockRow) -> u32 {
    let ones = full_add(up.ones, mid.ones, down.ones);
    let twos = full_add(up.twos, mid.twos, down.twos);
    let odd = ones.sum;
    let a = twos.sum;
    let b = ones.carry;
    let h = twos.carry;
    let pairs0 = ~(a | b | h);
    let pairs1 = (a ^ b) & ~h;
    let pairs2 = (a & b & ~h) | (h & ~(a | b));
    let pairs3 = (a ^ b) & h;
    let pairs4 = a & b & h;
    let x = mid.cells;
    let even = (pairs0 & block_entry(0u, x)) | (pairs1 & block_entry(2u, x))
             | (pairs2 & block_entry(4u, x)) | (pairs3 & block_entry(6u, x))
             | (pairs4 & block_entry(8u, x));
    let odds = (pairs0 & block_entry(1u, x)) | (pairs1 & block_entry(3u, x))
             | (pairs2 & block_entry(5u, x)) | (pairs3 & block_entry(7u, x))
             | (pairs4 & block_entry(9u, x));
    return (odd & odds) | (~odd & even);
}
