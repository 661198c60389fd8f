/**
 * What every column builder shares: where a column's values go, how nulls are told apart from values
 * masked by a null parent, and the validity bitmap.
 */
import { ValidationError } from '../../errors.js';

/**
 * Marks a slot whose parent struct is null: the value is absent, and that is allowed even for a
 * required field (Parquet records it through the parent's definition level).
 */
export const MASKED: unique symbol = Symbol('masked');

/** Where a column's values go and how they are checked. */
export interface ColumnTarget {
  id: number;
  /** Dotted path for error messages (`payload.items.element`). */
  path: string;
  required: boolean;
  /** Whether lower/upper bounds are kept (false inside lists and maps, as Iceberg Java does). */
  bounded: boolean;
}

/** Validity bitmap allocated on the first null only. */
export class ValidityBuilder {
  bitmap: Uint8Array | undefined;
  nullCount = 0;
  constructor(private readonly length: number) {}

  setNull(index: number): void {
    if (this.bitmap === undefined) this.bitmap = new Uint8Array((this.length + 7) >> 3).fill(0xff);
    this.bitmap[index >> 3] &= ~(1 << (index & 7));
    this.nullCount++;
  }
}

/**
 * True when a slot holds no value (null, missing or masked by a null parent).
 * @throws ValidationError when the field is required and the slot is not masked
 */
export function isNullSlot(value: unknown, col: ColumnTarget): boolean {
  if (value !== null && value !== undefined && value !== MASKED) return false;
  if (col.required && value !== MASKED) throw new ValidationError(`required field '${col.path}' is null`);
  return true;
}

/** The error for a value of the wrong representation, naming the field (not thrown here). */
export function wrongValue(col: ColumnTarget, type: string, value: unknown): ValidationError {
  const shown =
    typeof value === 'bigint' ? `${value}n` : typeof value === 'string' ? `'${value}'` : String(value);
  return new ValidationError(
    `field '${col.path}' of type ${type} cannot hold ${typeof value} ${shown.slice(0, 60)}`,
  );
}

export function nullsOf(validity: ValidityBuilder): {
  nullCount: number;
  nullBitmap: Uint8Array | undefined;
} {
  return { nullCount: validity.nullCount, nullBitmap: validity.bitmap };
}
