/**
 * Exact text for values that JSON cannot carry without loss: 64-bit integers, decimals, and epoch
 * timestamps finer than milliseconds. Decoders emit these so the mapper (json-to-value.ts) converts
 * them with no float in between: integers beyond 2^53 and decimals as `JsonNumberText`, timestamps as
 * ISO-8601 text (which `parseIsoTimestamp` reads to exact microseconds), bytes as base64.
 */
import { civilFromDays, floorDivBig, floorModBig } from '../spec/epoch-time.js';
import { JsonNumberText } from '../records/json-to-value.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit integer as a JSON number when it is exact as a double, else as its exact text. */
export function exactInteger(n: bigint): number | JsonNumberText {
  return n >= -MAX_SAFE && n <= MAX_SAFE ? Number(n) : new JsonNumberText(n.toString());
}

/** A double as JSON allows it: NaN and ±Infinity become the strings json-to-value accepts for floats. */
export function jsonDouble(n: number): number | string {
  if (Number.isFinite(n)) return n;
  return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
}

/** Big-endian two's complement bytes (Avro and Confluent decimals) → bigint. Empty bytes are 0. */
export function bigintFromTwosComplement(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return bytes[0] & 0x80 ? n - (1n << BigInt(bytes.length * 8)) : n;
}

/** Unscaled value and scale → exact decimal text with exactly `scale` digits after the point. */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  let digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return `${negative ? '-' : ''}${digits}${'0'.repeat(-scale)}`;
  digits = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** Sets a key as an own property, `__proto__` included (a plain assignment would set the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const UNITS_PER_SECOND = { millis: 1_000n, micros: 1_000_000n, nanos: 1_000_000_000n } as const;
const FRACTION_DIGITS = { millis: 3, micros: 6, nanos: 9 } as const;
export type EpochUnit = keyof typeof UNITS_PER_SECOND;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Years as ISO-8601 writes them: 4 digits, a sign and more digits outside 0000–9999. */
function formatYear(year: number): string {
  if (year >= 0 && year <= 9999) return pad(year, 4);
  return `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 4)}`;
}

/**
 * An epoch value → `YYYY-MM-DDTHH:MM:SS.fff[fff[fff]]` with every fraction digit of its unit (3 for
 * millis, 6 for micros, 9 for nanos), followed by `Z` for instants (`timestamp-*`) and nothing for
 * wall-clock values (`local-timestamp-*`). Floors, so values before 1970 are right.
 */
export function formatEpochValue(value: bigint, unit: EpochUnit, utc: boolean): string {
  const perSecond = UNITS_PER_SECOND[unit];
  const seconds = floorDivBig(value, perSecond);
  const fraction = floorModBig(value, perSecond);
  const days = floorDivBig(seconds, 86_400n);
  const secondOfDay = Number(seconds - days * 86_400n);
  const { year, month, day } = civilFromDays(Number(days));
  const clock = `${pad(Math.floor(secondOfDay / 3600), 2)}:${pad(Math.floor(secondOfDay / 60) % 60, 2)}:${pad(secondOfDay % 60, 2)}`;
  const text = `${formatYear(year)}-${pad(month, 2)}-${pad(day, 2)}T${clock}.${fraction.toString().padStart(FRACTION_DIGITS[unit], '0')}`;
  return utc ? `${text}Z` : text;
}

/** Days since 1970-01-01 → `YYYY-MM-DD`. */
export function formatEpochDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${formatYear(year)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/**
 * A time of day since midnight → `HH:MM:SS.fff` (millis) or `HH:MM:SS.ffffff` (micros); undefined
 * when the value is not within one day (the caller keeps the number, so nothing is lost).
 */
export function formatTimeOfDay(value: bigint, unit: 'millis' | 'micros'): string | undefined {
  const perSecond = UNITS_PER_SECOND[unit];
  if (value < 0n || value >= 86_400n * perSecond) return undefined;
  const seconds = Number(value / perSecond);
  const fraction = (value % perSecond).toString().padStart(FRACTION_DIGITS[unit], '0');
  return `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}.${fraction}`;
}
