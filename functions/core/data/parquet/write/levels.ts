/**
 * Arrow RecordBatch → Parquet definition and repetition levels per leaf column (Dremel shredding),
 * straight from validity bitmaps and list/map offsets. Every level also carries the Arrow slot of its
 * value, so the value encoders read the leaf's typed arrays directly. Top-level columns without nulls
 * allocate nothing: absent arrays mean "every level is defined", "no repetition", "slot = level".
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../../errors.js';
import type { LeafColumn, ParquetSchema, ShapeNode } from './parquet-schema.js';

/** The levels of one leaf column over the whole batch. */
export interface LeafLevels {
  leaf: LeafColumn;
  /** The leaf's Arrow data (values are read at `slots[k]`, or `k` when slots is null). */
  data: arrow.Data;
  /** Number of levels: values written, nulls included. */
  count: number;
  /** Definition level per level; null when every level is `maxDef`. */
  defs: Uint8Array | null;
  /** Repetition level per level; null when `maxRep` is 0. */
  reps: Uint8Array | null;
  /** Arrow slot per level (meaningful where the level is `maxDef`); null when slot = level index. */
  slots: Int32Array | null;
}

/** Marks an entry still defined at the current depth (real levels are below it). */
const PRESENT = 255;

interface Entries {
  count: number;
  /** PRESENT, or the definition level at which the entry ended (a null or an empty list above). */
  defs: Uint8Array | null;
  reps: Uint8Array | null;
  slots: Int32Array | null;
  /** Definition level of a PRESENT entry at this depth. */
  def: number;
  rep: number;
}

/** @throws ValidationError when the batch does not have the schema's shape or a required value is null */
export function shredBatch(schema: ParquetSchema, batch: arrow.RecordBatch): LeafLevels[] {
  const root = batch.data;
  if (root.children.length !== schema.fields.length) {
    throw new ValidationError(
      `record batch has ${root.children.length} columns, schema has ${schema.fields.length}`,
    );
  }
  const out: LeafLevels[] = new Array(schema.leaves.length);
  const start: Entries = { count: batch.numRows, defs: null, reps: null, slots: null, def: 0, rep: 0 };
  schema.fields.forEach((node, j) => {
    walk(schema, node, root.children[j], start, out);
  });
  return out;
}

function walk(
  schema: ParquetSchema,
  node: ShapeNode,
  data: arrow.Data,
  at: Entries,
  out: LeafLevels[],
): void {
  if (data.offset !== 0) {
    throw new ValidationError('sliced Arrow data (offset ≠ 0) is not supported by the Parquet writer');
  }
  const entries = node.optional ? applyNulls(at, data) : checkRequired(node, at, data);
  switch (node.kind) {
    case 'leaf':
      out[node.leaf] = finishLeaf(schema.leaves[node.leaf], data, entries);
      return;
    case 'struct':
      expectType(node, data, arrow.Type.Struct, node.children.length);
      node.children.forEach((child, j) => {
        walk(schema, child, data.children[j], entries, out);
      });
      return;
    case 'list': {
      expectType(node, data, arrow.Type.List, 1);
      walk(schema, node.element, data.children[0], expand(entries, data), out);
      return;
    }
    case 'map': {
      expectType(node, data, arrow.Type.Map, 1);
      const pairs = data.children[0];
      if (pairs.children.length !== 2) throw shapeError(node, 'a map entry without key and value');
      const inner = expand(entries, data);
      walk(schema, node.key, pairs.children[0], inner, out);
      walk(schema, node.value, pairs.children[1], inner, out);
    }
  }
}

function hasNulls(data: arrow.Data): boolean {
  const bitmap = data.nullBitmap;
  return bitmap !== undefined && bitmap.length > 0 && data.nullCount > 0;
}

/** An optional node: entries whose slot is null end here, at the depth above this node. */
function applyNulls(at: Entries, data: arrow.Data): Entries {
  if (!hasNulls(data)) return { ...at, def: at.def + 1 };
  const bitmap = data.nullBitmap as Uint8Array;
  const n = at.count;
  const defs = at.defs ? at.defs.slice() : new Uint8Array(n).fill(PRESENT);
  const slots = at.slots;
  for (let k = 0; k < n; k++) {
    if (defs[k] !== PRESENT) continue;
    const s = slots ? slots[k] : k;
    if (((bitmap[s >> 3] >> (s & 7)) & 1) === 0) defs[k] = at.def;
  }
  return { ...at, defs, def: at.def + 1 };
}

/** A required node may hold nulls only where a null parent masks them. */
function checkRequired(node: ShapeNode, at: Entries, data: arrow.Data): Entries {
  if (!hasNulls(data)) return at;
  const bitmap = data.nullBitmap as Uint8Array;
  const { defs, slots } = at;
  for (let k = 0; k < at.count; k++) {
    if (defs && defs[k] !== PRESENT) continue;
    const s = slots ? slots[k] : k;
    if (((bitmap[s >> 3] >> (s & 7)) & 1) === 0) {
      throw new ValidationError(`required field '${describe(node)}' is null`);
    }
  }
  return at;
}

/** One entry per list (or map) element; a null or empty list stays one entry that ends here. */
function expand(at: Entries, data: arrow.Data): Entries {
  const offsets = data.valueOffsets as Int32Array;
  const { count, defs, reps, slots } = at;
  let total = 0;
  let ended = defs !== null;
  for (let k = 0; k < count; k++) {
    if (defs && defs[k] !== PRESENT) {
      total++;
      continue;
    }
    const s = slots ? slots[k] : k;
    const len = offsets[s + 1] - offsets[s];
    if (len > 0) total += len;
    else {
      total++;
      ended = true;
    }
  }
  const outDefs = ended ? new Uint8Array(total) : null;
  const outReps = new Uint8Array(total);
  const outSlots = new Int32Array(total);
  const rep = at.rep + 1;
  let o = 0;
  for (let k = 0; k < count; k++) {
    const r = reps ? reps[k] : 0;
    if (defs && defs[k] !== PRESENT) {
      (outDefs as Uint8Array)[o] = defs[k];
      outReps[o] = r;
      outSlots[o++] = -1;
      continue;
    }
    const s = slots ? slots[k] : k;
    const a = offsets[s];
    const b = offsets[s + 1];
    if (a === b) {
      (outDefs as Uint8Array)[o] = at.def; // the list is there but empty
      outReps[o] = r;
      outSlots[o++] = -1;
      continue;
    }
    for (let e = a; e < b; e++) {
      if (outDefs) outDefs[o] = PRESENT;
      outReps[o] = e === a ? r : rep;
      outSlots[o++] = e;
    }
  }
  return { count: total, defs: outDefs, reps: outReps, slots: outSlots, def: at.def + 1, rep };
}

function finishLeaf(leaf: LeafColumn, data: arrow.Data, at: Entries): LeafLevels {
  if (at.def !== leaf.maxDef || at.rep !== leaf.maxRep || leaf.maxDef >= PRESENT) {
    throw new ValidationError(`field '${leaf.name}' has inconsistent nesting depth`);
  }
  checkLeafType(leaf, data);
  let defs: Uint8Array | null = null;
  if (at.defs) {
    let nullCount = 0;
    const src = at.defs;
    const n = at.count;
    const levels = new Uint8Array(n);
    const max = leaf.maxDef;
    for (let k = 0; k < n; k++) {
      const d = src[k];
      if (d === PRESENT) levels[k] = max;
      else {
        levels[k] = d;
        nullCount++;
      }
    }
    if (nullCount > 0) defs = levels;
  }
  return {
    leaf,
    data,
    count: at.count,
    defs,
    reps: leaf.maxRep > 0 ? at.reps : null,
    slots: at.slots,
  };
}

/** The Arrow layout the value encoders expect for each leaf kind (what build-record-batch.ts builds). */
function checkLeafType(leaf: LeafColumn, data: arrow.Data): void {
  const t = data.type;
  const v = data.values;
  let ok: boolean;
  switch (leaf.kind) {
    case 'boolean':
      ok = t.typeId === arrow.Type.Bool;
      break;
    case 'int32':
      ok = v instanceof Int32Array && (t.typeId === arrow.Type.Int || t.typeId === arrow.Type.Date);
      break;
    case 'int64':
      ok = v instanceof BigInt64Array;
      break;
    case 'float':
      ok = v instanceof Float32Array;
      break;
    case 'double':
      ok = v instanceof Float64Array;
      break;
    case 'decimal32':
    case 'decimal64':
    case 'decimalFixed':
      ok =
        t.typeId === arrow.Type.Decimal && v instanceof Uint32Array && (t as arrow.Decimal).bitWidth === 128;
      break;
    case 'bytes':
      ok =
        (t.typeId === arrow.Type.Utf8 || t.typeId === arrow.Type.Binary) &&
        data.valueOffsets instanceof Int32Array;
      break;
    case 'fixed':
      ok =
        t.typeId === arrow.Type.FixedSizeBinary && (t as arrow.FixedSizeBinary).byteWidth === leaf.typeLength;
      break;
  }
  if (!ok)
    throw new ValidationError(`field '${leaf.name}' has Arrow type ${String(t)}, not one for ${leaf.kind}`);
}

function expectType(node: ShapeNode, data: arrow.Data, typeId: arrow.Type, children: number): void {
  if (data.type.typeId !== typeId || data.children.length !== children) {
    throw shapeError(node, `Arrow type ${String(data.type)}`);
  }
}

function shapeError(node: ShapeNode, what: string): ValidationError {
  return new ValidationError(`field '${describe(node)}' has ${what}, not the schema's ${node.kind}`);
}

function describe(node: ShapeNode): string {
  return node.name;
}
