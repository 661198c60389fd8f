/**
 * Walks one projected record against a draft of the table schema and applies, to the draft, the
 * compatible changes the record needs (new optional fields with fresh ids, int → long, float → double,
 * decimal precision, required → optional). Every change is recorded with its undo, so a record that
 * turns out to need an incompatible change leaves the draft exactly as it found it (and uses no ids).
 *
 * Only the value's *kind* and the widening of numbers are judged here; content errors of an
 * acceptable kind (a malformed date string, a bad uuid) are left to the row conversion, which sends
 * those records to the DLQ at stage `map`.
 */
import type {
  IcebergType,
  ListType,
  MapType,
  PrimitiveType,
  StructField,
  StructType,
  Transform,
} from '../../spec/types.js';
import { decimalParams } from '../../spec/conversions.js';
import { describeJsonValue, doubleOf } from '../../records/json-to-value.js';
import { isFieldObject, ownValue, type ValueObject } from '../value-paths.js';
import {
  assignFreshIds,
  checkNewName,
  IncompatibleValueError,
  inferType,
  integerOf,
  MAX_DEPTH,
  numericTextOf,
  unifyTypes,
} from './infer-type.js';
import { canPromote, decimalType, promotionKeepsPartitionValues, samePrimitive } from './promotions.js';
import { acceptsKind, decimalDigits, kindOf } from './value-kinds.js';

export interface WalkContext {
  /** last-column-id of the base: ids above it were assigned in this batch (their types may still change). */
  readonly baseLastColumnId: number;
  nextId: number;
  readonly identifierIds: ReadonlySet<number>;
  /**
   * Columns a record may leave missing or null without a change: its row gets them elsewhere (a CDC
   * upsert's key columns, from the Kafka key) or its extraction refuses it with its own reason.
   */
  readonly absentOk: ReadonlySet<number>;
  /** Partition fields by source column id, over every spec of the table. */
  readonly partitionSources: ReadonlyMap<number, { name: string; transform: Transform }[]>;
  readonly hints: ReadonlyMap<string, PrimitiveType>;
  /** Undo steps of the record being walked, in the order applied. */
  undo: (() => void)[];
  /** What the record being walked changed, for messages (policy dlq). */
  applied: string[];
}

/**
 * Where a type lives in the draft, so it can be changed in place: a struct field, a list (its element)
 * or a map (its value). Plain draft nodes, no wrapper objects: the walk runs for every record.
 */
type Slot = StructField | ListType | MapType;

function isField(slot: Slot): slot is StructField {
  // A list or map node carries its child's id; a struct field carries its own `id` and `name`.
  return !('element-id' in slot) && !('key-id' in slot);
}

function slotId(slot: Slot): number {
  if (isField(slot)) return slot.id;
  return slot.type === 'list' ? slot['element-id'] : slot['value-id'];
}

function slotType(slot: Slot): IcebergType {
  if (isField(slot)) return slot.type;
  return slot.type === 'list' ? slot.element : slot.value;
}

function setSlotType(slot: Slot, type: IcebergType): void {
  if (isField(slot)) slot.type = type;
  else if (slot.type === 'list') slot.element = type;
  else slot.value = type;
}

function slotRequired(slot: Slot): boolean {
  if (isField(slot)) return slot.required;
  return slot.type === 'list' ? slot['element-required'] : slot['value-required'];
}

function setSlotRequired(slot: Slot, required: boolean): void {
  if (isField(slot)) slot.required = required;
  else if (slot.type === 'list') slot['element-required'] = required;
  else slot['value-required'] = required;
}

/** A value's display path (`lines[1].qty`); built only when a message or a child needs it. */
function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * A field path, built only when a message needs it. The walk visits every value of every record, so
 * it allocates one small object per value instead of a string (or a closure, which the bundler's
 * name-keeping wraps on every creation).
 */
class LazyPath {
  constructor(
    private readonly parent: string,
    private readonly key: string | number,
  ) {}
  text(): string {
    return pathOf(this.parent, this.key);
  }
}

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

function reject(path: string, message: string): never {
  throw new IncompatibleValueError(`${path}: ${message}`);
}

function change(ctx: WalkContext, description: string, apply: () => void, undo: () => void): void {
  apply();
  ctx.undo.push(undo);
  ctx.applied.push(description);
}

function promote(ctx: WalkContext, slot: Slot, to: PrimitiveType, path: string): void {
  const from = slotType(slot) as PrimitiveType;
  for (const p of ctx.partitionSources.get(slotId(slot)) ?? []) {
    if (!promotionKeepsPartitionValues(p.transform, from, to)) {
      reject(path, `${from} → ${to} would change the values of partition field '${p.name}' (${p.transform})`);
    }
  }
  retype(ctx, slot, from, to, `${path}: ${from} → ${to}`);
}

function retype(ctx: WalkContext, slot: Slot, from: IcebergType, to: IcebergType, description: string): void {
  change(
    ctx,
    description,
    () => setSlotType(slot, to),
    () => setSlotType(slot, from),
  );
}

function makeOptional(ctx: WalkContext, slot: Slot, path: LazyPath): void {
  if (!slotRequired(slot) || ctx.absentOk.has(slotId(slot))) return;
  if (ctx.identifierIds.has(slotId(slot))) {
    reject(
      path.text(),
      'is null or missing, but it is an identifier column (identifier columns stay required)',
    );
  }
  change(
    ctx,
    `${path.text()}: required → optional`,
    () => setSlotRequired(slot, false),
    () => setSlotRequired(slot, true),
  );
}

function walkPrimitive(
  ctx: WalkContext,
  slot: Slot,
  type: PrimitiveType,
  v: unknown,
  path: LazyPath,
  rulePath: string,
): void {
  const isNew = slotId(slot) > ctx.baseLastColumnId;
  const hint = ctx.hints.size === 0 ? undefined : ctx.hints.get(rulePath);
  if (hint) {
    if (samePrimitive(hint, type) || canPromote(hint, type)) return;
    if (canPromote(type, hint)) {
      promote(ctx, slot, hint, path.text());
      return;
    }
    reject(
      path.text(),
      `the mapping makes it a ${hint}, but the column is ${type} (not a compatible change)`,
    );
  }
  if (!acceptsKind(type, v)) {
    if (isNew) {
      const inferred = inferType(v, path.text(), rulePath, ctx.hints);
      if (inferred !== undefined) {
        const unified = unifyTypes(type, inferred, path.text());
        if (unified !== type)
          retype(ctx, slot, type, unified, `${path.text()}: ${type} → ${String(unified)} (new column)`);
      }
      return;
    }
    reject(
      path.text(),
      `${describeJsonValue(v)} cannot go into the ${type} column (${kindOf(v)} → ${type} is not a compatible change)`,
    );
  }
  if (type === 'int' || type === 'long') {
    if (typeof v === 'number' && Number.isSafeInteger(v)) {
      // The common case, without bigints.
      if (type === 'int' && (v < -2147483648 || v > 2147483647)) promote(ctx, slot, 'long', path.text());
      return;
    }
    const n = integerOf(v);
    if (n === undefined) {
      if (isNew && type === 'long') {
        retype(ctx, slot, type, 'double', `${path.text()}: long → double (new column)`);
        return;
      }
      reject(
        path.text(),
        `${describeJsonValue(v)} is not an integer (${type} → double is not a compatible change)`,
      );
    }
    if (n < LONG_MIN || n > LONG_MAX)
      reject(path.text(), `${n} is beyond the long range (long cannot be widened further)`);
    if (type === 'int' && (n < INT_MIN || n > INT_MAX)) promote(ctx, slot, 'long', path.text());
    return;
  }
  if (type === 'float') {
    // Numbers and number strings alike (one rule for float columns, see json-to-value's doubleOf).
    const n = typeof v === 'number' ? v : doubleOf(v);
    if (n !== undefined && Number.isFinite(n) && !Number.isFinite(Math.fround(n)))
      promote(ctx, slot, 'double', path.text());
    return;
  }
  if (type.startsWith('decimal')) {
    const dec = decimalParams(type)!;
    const text = numericTextOf(v) ?? (typeof v === 'string' ? v : undefined);
    const needs = text === undefined ? undefined : decimalDigits(text, dec.scale);
    if (needs === undefined) return;
    if (needs.scaleNeeded !== undefined) {
      reject(
        path.text(),
        `${describeJsonValue(v)} has ${needs.scaleNeeded} decimal places, the column is ${type} (a scale change is not compatible; no rounding is done)`,
      );
    }
    if (needs.precision > 38)
      reject(
        path.text(),
        `${describeJsonValue(v)} needs ${needs.precision} digits, more than a decimal holds (38)`,
      );
    if (needs.precision > dec.precision)
      promote(ctx, slot, decimalType(needs.precision, dec.scale), path.text());
  }
}

function walkValue(
  ctx: WalkContext,
  slot: Slot,
  v: unknown,
  path: LazyPath,
  rulePath: string,
  depth: number,
): void {
  if (depth > MAX_DEPTH) reject(path.text(), `nested deeper than ${MAX_DEPTH} levels`);
  const type = slotType(slot);
  if (typeof type === 'string') {
    walkPrimitive(ctx, slot, type, v, path, rulePath);
    return;
  }
  if (type.type === 'struct') {
    if (!isFieldObject(v)) {
      reject(
        path.text(),
        `${describeJsonValue(v)} cannot go into a struct column (${kindOf(v)} → struct is not a compatible change)`,
      );
    }
    walkStruct(ctx, type, v, path.text(), rulePath, depth + 1);
    return;
  }
  if (type.type === 'list') {
    if (!Array.isArray(v)) {
      reject(
        path.text(),
        `${describeJsonValue(v)} cannot go into a list column (${kindOf(v)} → list is not a compatible change)`,
      );
    }
    const parent = path.text();
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      const itemPath = new LazyPath(parent, i);
      if (item === null || item === undefined) makeOptional(ctx, type, itemPath);
      else walkValue(ctx, type, item, itemPath, rulePath, depth + 1);
    }
    return;
  }
  const entries: [string, unknown][] =
    v instanceof Map
      ? [...v.entries()].map(([k, x]) => [String(k), x])
      : Array.isArray(v)
        ? v.map((e, i) => [String(i), isFieldObject(e) ? e.value : undefined])
        : isFieldObject(v)
          ? Object.entries(v)
          : reject(
              path.text(),
              `${describeJsonValue(v)} cannot go into a map column (${kindOf(v)} → map is not a compatible change)`,
            );
  const parent = path.text();
  for (const [k, item] of entries) {
    const itemPath = new LazyPath(parent, k);
    // Rule paths do not reach into maps: their keys are data, not field names.
    if (item === null || item === undefined) makeOptional(ctx, type, itemPath);
    else walkValue(ctx, type, item, itemPath, `${rulePath}\u0000`, depth + 1);
  }
}

/**
 * Walks a struct's value. `skip` names top-level draft fields the value does not fill (`_kafka`).
 * @throws IncompatibleValueError after undoing nothing itself (the caller undoes the record)
 */
export function walkStruct(
  ctx: WalkContext,
  struct: StructType,
  obj: ValueObject,
  path: string,
  rulePath: string,
  depth: number,
  skip?: ReadonlySet<string>,
): void {
  const rules = ctx.hints.size > 0;
  let known = 0;
  for (const field of struct.fields) {
    if (skip?.has(field.name)) continue;
    const v = ownValue(obj, field.name);
    const fieldPath = new LazyPath(path, field.name);
    if (v === undefined) {
      makeOptional(ctx, field, fieldPath);
      continue;
    }
    known++;
    if (v === null) makeOptional(ctx, field, fieldPath);
    else walkValue(ctx, field, v, fieldPath, rules ? pathOf(rulePath, field.name) : '', depth);
  }
  // Every key of the object is a known field: nothing to add (the common case, checked by count).
  const keys = Object.keys(obj);
  if (keys.length === known) return;
  for (const name of keys) {
    const v = obj[name];
    if (v === null || v === undefined || skip?.has(name) || struct.fields.some((f) => f.name === name))
      continue;
    const fieldPath = pathOf(path, name);
    const inferred = inferType(v, fieldPath, pathOf(rulePath, name), ctx.hints, depth);
    if (inferred === undefined) continue;
    checkNewName(name, fieldPath);
    const firstId = ctx.nextId;
    const next = () => ctx.nextId++;
    const field: StructField = { id: next(), name, required: false, type: 'string' };
    field.type = assignFreshIds(inferred, next);
    change(
      ctx,
      `${fieldPath}: new column (${typeName(field.type)})`,
      () => struct.fields.push(field),
      () => {
        struct.fields.splice(struct.fields.indexOf(field), 1);
        ctx.nextId = firstId;
      },
    );
  }
}

function typeName(type: IcebergType): string {
  if (typeof type === 'string') return type;
  if (type.type === 'list') return `list<${typeName(type.element)}>`;
  if (type.type === 'map') return `map<${typeName(type.key)}, ${typeName(type.value)}>`;
  return `struct<${type.fields.map((f) => f.name).join(', ')}>`;
}
