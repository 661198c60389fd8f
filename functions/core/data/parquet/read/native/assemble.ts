/**
 * Levels and values of the leaf columns → the Arrow Data of a batch of rows (the inverse of the
 * writer's levels.ts shredding). Each node of the nesting has a slot wherever a level's repetition is
 * at most the node's and its definition reaches the node's slot level; the slot is valid where the
 * definition reaches the node's own level; a list's offsets count its element's slots. Every leaf
 * under a node must give the node the same slots, validity and offsets, or the file is not taken.
 * Arrays come out as parquet-wasm hands them over: offset 0, nulls zero-filled, a validity bitmap only
 * on nullable nodes.
 */
import * as arrow from 'apache-arrow';
import type { LeafColumn } from './column-chunk.js';
import { notNative } from './compact-reader.js';
import type { Slab } from '../../../arrow/arrow-ffi.js';
import type { FloeSchema, LeafPath, ReadNode } from './floe-schema.js';
import { bitmapOf, int32s, leafData } from './leaf-data.js';

/** A node's slots in the batch being built. */
interface NodeOut {
  length: number;
  /** Validity bits (nullable nodes). */
  valid: Uint8Array | null;
  nulls: number;
  /** Lists: length + 1 offsets. */
  offsets: Int32Array | null;
  /** Leaves: their Data. */
  data?: arrow.Data;
}

/**
 * The nodes built so far in a batch, and the last leaf walked: a sibling leaf with the same levels
 * (lines' sku, qty and unit_price; a header's key and value) has the same slots, so it is not walked.
 */
type Outs = Map<ReadNode, NodeOut> & { last?: LastWalk };

interface LastWalk {
  parent: ReadNode;
  leaf: ReadNode;
  column: LeafColumn;
  from: number;
  to: number;
  built: Built;
  slotOf: Int32Array;
}

/** Where each leaf's next batch starts. */
export interface LeafCursor {
  level: number;
  value: number;
}

/** Levels [from, to) of one leaf that make up the batch, and its first value. */
interface LeafRange {
  column: LeafColumn;
  from: number;
  to: number;
  value: number;
}

/**
 * The Data of each top-level field for the next `rows` rows (the last batch when `rows` is all that
 * is left); advances the cursors. Buffers come from `slab`.
 * @throws NotNativeError when the leaves disagree
 */
export function assembleBatch(
  schema: FloeSchema,
  columns: LeafColumn[],
  cursors: LeafCursor[],
  rows: number,
  rowsLeft: number,
  slab: Slab,
): arrow.Data[] {
  const last = rows === rowsLeft;
  const outs = new Map<ReadNode, NodeOut>() as Outs;
  return schema.nodes.map((node) => {
    if (node.kind === 'leaf') {
      const l = node.leaf;
      return flatLeaf(rangeOf(columns[l], cursors[l], rows, last), rows, cursors[l], slab);
    }
    for (let l = node.firstLeaf; l < node.endLeaf; l++) {
      walkLeaf(schema.paths[l], rangeOf(columns[l], cursors[l], rows, last), outs, cursors[l], slab);
    }
    return build(node, outs);
  });
}

function rangeOf(column: LeafColumn, cursor: LeafCursor, rows: number, last: boolean): LeafRange {
  const from = cursor.level;
  let to = from + rows;
  const reps = column.reps;
  if (reps !== null && last)
    to = column.count; // the chunks' row counts were checked
  else if (reps !== null) {
    let seen = 0;
    to = column.count;
    for (let k = from; k < column.count; k++) {
      if (reps[k] === 0 && seen++ === rows) {
        to = k;
        break;
      }
    }
    if (seen < rows) notNative('fewer rows than the footer says');
  } else if (to > column.count) notNative('fewer rows than the footer says');
  return { column, from, to, value: cursor.value };
}

let slotScratch = new Int32Array(1024);

function slotsOf(n: number): Int32Array {
  if (slotScratch.length < n) slotScratch = new Int32Array(Math.max(n, slotScratch.length * 2));
  return slotScratch;
}

/** A top-level primitive column: one level per row, one slot per level. */
function flatLeaf(range: LeafRange, rows: number, cursor: LeafCursor, slab: Slab): arrow.Data {
  const { column, from } = range;
  const defs = column.defs;
  let present = rows;
  let valid: Uint8Array | null = null;
  let slotOf: Int32Array | null = null;
  if (defs !== null) {
    valid = slab.take((rows + 7) >> 3);
    slotOf = slotsOf(rows);
    present = 0;
    const max = column.info.maxDef;
    for (let s = 0; s < rows; s++) {
      if (defs[from + s] === max) {
        valid[s >> 3] |= 1 << (s & 7);
        slotOf[present++] = s;
      }
    }
  }
  cursor.level = range.to;
  cursor.value = range.value + present;
  return leafData(column, range.value, present, rows, slotOf, valid, rows - present, slab);
}

function newOut(node: ReadNode, capacity: number, slab: Slab): NodeOut {
  return {
    length: 0,
    valid: node.nullable ? slab.take((capacity + 7) >> 3) : null,
    nulls: 0,
    offsets: node.kind === 'list' ? int32s(slab, capacity + 1) : null,
  };
}

/** One leaf's levels through its path: builds the nodes no leaf built yet, checks the others. */
function walkLeaf(path: LeafPath, range: LeafRange, outs: Outs, cursor: LeafCursor, slab: Slab): void {
  const { column, from, to } = range;
  const { nodes } = path;
  const m = nodes.length;
  const leafNode = nodes[m - 1];
  const last = outs.last;
  let built: Built;
  let slotOf: Int32Array;
  if (last !== undefined && last.parent === nodes[m - 2] && sameLevels(last, column, from, to, leafNode)) {
    // Same parent, same levels, same leaf levels: the same slots (the parents are checked already).
    const prev = last.built;
    built = prev.map((o) => ({ ...o, data: undefined })) as Built;
    built.present = prev.present;
    slotOf = last.slotOf;
  } else {
    slotOf = slotsOf(to - from);
    built = path.hasList
      ? walkNested(path, column, from, to, slotOf, slab)
      : walkStructs(path, column, from, to, slotOf, slab);
  }
  outs.last = { parent: nodes[m - 2], leaf: leafNode, column, from, to, built, slotOf };
  for (let j = 0; j < m - 1; j++) {
    const known = outs.get(nodes[j]);
    if (known === undefined) outs.set(nodes[j], built[j]);
    else if (!sameOut(known, built[j])) notNative('leaves disagree on their parents');
  }
  const out = built[m - 1];
  const present = built.present;
  out.data = leafData(column, range.value, present, out.length, slotOf, out.valid, out.nulls, slab);
  outs.set(nodes[m - 1], out);
  cursor.level = to;
  cursor.value = range.value + present;
}

type Built = NodeOut[] & { present: number };

/** A leaf under structs only: every level is a slot of every node on the way. */
function walkStructs(
  path: LeafPath,
  column: LeafColumn,
  from: number,
  to: number,
  slotOf: Int32Array,
  slab: Slab,
): Built {
  const defs = column.defs;
  const n = to - from;
  const built = path.nodes.map((node, j): NodeOut => {
    const out: NodeOut = { length: n, valid: null, nulls: 0, offsets: null };
    if (!node.nullable || defs === null) return out; // no nulls on the way: every slot valid
    const valid = slab.take((n + 7) >> 3);
    const min = path.presentDef[j];
    let nulls = 0;
    for (let s = 0; s < n; s++) {
      if (defs[from + s] >= min) valid[s >> 3] |= 1 << (s & 7);
      else nulls++;
    }
    out.valid = valid;
    out.nulls = nulls;
    return out;
  }) as Built;
  let present = n;
  if (defs !== null) {
    const max = column.info.maxDef;
    present = 0;
    for (let s = 0; s < n; s++) if (defs[from + s] === max) slotOf[present++] = s;
  }
  built.present = present;
  return built;
}

/** A leaf under a list: slots where a level's repetition and definition reach each node. */
function walkNested(
  path: LeafPath,
  column: LeafColumn,
  from: number,
  to: number,
  slotOf: Int32Array,
  slab: Slab,
): Built {
  const { reps, defs } = column;
  const maxDef = column.info.maxDef;
  const { nodes, slotDef, rep, presentDef, listParent } = path;
  const m = nodes.length;
  const capacity = to - from;
  const built = nodes.map((n) => newOut(n, capacity, slab)) as Built;
  const lengths = new Int32Array(m);
  let present = 0;
  for (let k = from; k < to; k++) {
    const r = reps === null ? 0 : reps[k];
    const d = defs === null ? maxDef : defs[k];
    for (let j = 0; j < m; j++) {
      if (d < slotDef[j]) break;
      if (r > rep[j]) continue;
      const s = lengths[j]++;
      const out = built[j];
      if (out.valid !== null) {
        if (d >= presentDef[j]) out.valid[s >> 3] |= 1 << (s & 7);
        else out.nulls++;
      }
      if (out.offsets !== null) out.offsets[s + 1] = lengths[j + 1];
      const parent = listParent[j];
      if (parent >= 0) (built[parent].offsets as Int32Array)[lengths[parent]] = lengths[j];
      if (j === m - 1 && d === maxDef) slotOf[present++] = s;
    }
  }
  for (let j = 0; j < m; j++) built[j].length = lengths[j];
  built.present = present;
  return built;
}

/** Whether `column`'s levels [from, to) are those of the last leaf walked, with the same leaf levels. */
function sameLevels(last: LastWalk, column: LeafColumn, from: number, to: number, leaf: ReadNode): boolean {
  const a = last.column;
  const before = last.leaf;
  if (
    last.to - last.from !== to - from ||
    a.info.maxDef !== column.info.maxDef ||
    a.info.maxRep !== column.info.maxRep ||
    before.nullable !== leaf.nullable ||
    before.slotDef !== leaf.slotDef ||
    before.presentDef !== leaf.presentDef ||
    before.rep !== leaf.rep
  ) {
    return false;
  }
  const n = to - from;
  const same = (x: Uint8Array | null, y: Uint8Array | null) => {
    if (x === null || y === null) return x === y;
    for (let k = 0; k < n; k++) if (x[last.from + k] !== y[from + k]) return false;
    return true;
  };
  return same(a.reps, column.reps) && same(a.defs, column.defs);
}

function sameOut(a: NodeOut, b: NodeOut): boolean {
  if (a.length !== b.length || a.nulls !== b.nulls) return false;
  const bytes = (a.length + 7) >> 3;
  // Without nulls every slot is valid, whatever a bitmap that was not filled in holds.
  if (a.nulls > 0 && a.valid !== null && b.valid !== null) {
    for (let i = 0; i < bytes; i++) if (a.valid[i] !== b.valid[i]) return false;
  }
  if (a.offsets !== null && b.offsets !== null) {
    for (let i = 0; i <= a.length; i++) if (a.offsets[i] !== b.offsets[i]) return false;
  }
  return true;
}

function build(node: ReadNode, outs: Map<ReadNode, NodeOut>): arrow.Data {
  const out = outs.get(node) ?? notNative('a node without slots');
  if (node.kind === 'leaf') return out.data ?? notNative('a leaf without data');
  const nullBitmap = bitmapOf(out.valid, out.nulls, out.length);
  const nullCount = nullBitmap === undefined ? 0 : out.nulls;
  const children = node.children.map((c) => build(c, outs));
  const length = out.length;
  if (node.kind === 'struct') {
    if (children.some((c) => c.length !== length)) notNative('struct children of other lengths');
    const type = node.field.type as arrow.Struct;
    return arrow.makeData({ type, length, nullCount, nullBitmap, children });
  }
  const valueOffsets = (out.offsets as Int32Array).subarray(0, length + 1);
  const child = children[0];
  if (valueOffsets[length] !== child.length) notNative('list offsets past their elements');
  const type = node.field.type;
  if (type instanceof arrow.Map_) {
    return arrow.makeData({ type, length, nullCount, nullBitmap, valueOffsets, child });
  }
  return arrow.makeData({ type: type as arrow.List, length, nullCount, nullBitmap, valueOffsets, child });
}
