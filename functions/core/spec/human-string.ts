/**
 * Partition values as Iceberg Java writes them into data file paths (`Transform#toHumanString`,
 * `TransformUtil`): `2024-05-01` for a day, `2024-05` for a month, `2024-05-01-13` for an hour,
 * `LocalDateTime#toString` for timestamps, Base64 for bytes, `null` for null. Paths floe writes then look
 * like the paths every other Iceberg writer produces.
 */
import { ValidationError } from '../errors.js';
import { decimalParams } from './conversions.js';
import {
  civilFromDays,
  formatDate,
  formatJavaPadded4,
  formatTimeOfDay,
  formatTimestamp,
  formatTimestampNanos,
} from './epoch-time.js';
import type { IcebergType, Transform, Value } from './types.js';

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** Years since 1970 → `yyyy`. */
export function humanYear(years: number): string {
  return formatJavaPadded4(1970 + years);
}

/** Months since 1970-01 → `yyyy-MM`. */
export function humanMonth(months: number): string {
  const year = 1970 + Math.floor(months / 12);
  return `${formatJavaPadded4(year)}-${pad2((((months % 12) + 12) % 12) + 1)}`;
}

/** Hours since 1970-01-01T00 → `yyyy-MM-dd-HH`. */
export function humanHour(hours: number): string {
  const days = Math.floor(hours / 24);
  const { year, month, day } = civilFromDays(days);
  return `${formatJavaPadded4(year)}-${pad2(month)}-${pad2(day)}-${pad2(hours - days * 24)}`;
}

/**
 * A decimal's unscaled value as `java.math.BigDecimal#toString` writes it: plain unless the adjusted
 * exponent is below −6, then scientific (`1E-10`).
 */
export function humanDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  const sign = negative ? '-' : '';
  const adjusted = digits.length - 1 - scale;
  if (scale === 0) return sign + digits;
  if (adjusted >= -6) {
    if (digits.length > scale) return `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    return `${sign}0.${digits.padStart(scale, '0')}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}E${adjusted}`;
}

/**
 * A float or double as `Float#toString` / `Double#toString` write it (shortest digits that read back
 * the same; plain for 10^-3 ≤ |v| < 10^7, else `d.dddE±n`; always a fractional part).
 */
export function humanFloatingPoint(value: number, single: boolean): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  let shortest = value;
  if (single) {
    // JS only knows doubles: find the fewest significant digits that still round to this float.
    for (let p = 1; p <= 9; p++) {
      const candidate = Number(value.toPrecision(p));
      if (Math.fround(candidate) === value) {
        shortest = candidate;
        break;
      }
    }
  }
  const [mantissa, exponentText] = shortest.toExponential().split('e');
  const exponent = Number(exponentText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const abs = Math.abs(shortest);
  if (abs >= 1e-3 && abs < 1e7) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    return `${sign}${whole}.${digits.slice(exponent + 1) || '0'}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exponent}`;
}

/** A value of a source type (identity or truncate result) as Java's human string. */
function humanSourceValue(type: IcebergType, value: Value): string {
  if (typeof type !== 'string') throw new ValidationError(`a ${type.type} has no partition string`);
  switch (type) {
    case 'date':
      return formatDate(Number(value));
    case 'time':
      return formatTimeOfDay(BigInt(value as bigint | number));
    case 'timestamp':
      return formatTimestamp(BigInt(value as bigint | number));
    case 'timestamptz':
      return `${formatTimestamp(BigInt(value as bigint | number))}Z`;
    case 'timestamp_ns':
      return formatTimestampNanos(BigInt(value as bigint | number));
    case 'timestamptz_ns':
      return `${formatTimestampNanos(BigInt(value as bigint | number))}Z`;
    case 'float':
    case 'double':
      return humanFloatingPoint(value as number, type === 'float');
    case 'binary':
      return Buffer.from(value as Uint8Array).toString('base64');
  }
  const decimal = decimalParams(type);
  if (decimal) return humanDecimal(BigInt(value as bigint | number), decimal.scale);
  if (type.startsWith('fixed')) return Buffer.from(value as Uint8Array).toString('base64');
  return String(value);
}

/**
 * The human string of one partition value: what a transform produced from a column of `sourceType`.
 * @throws ValidationError for a transform that produces no printable value from that type
 */
export function toHumanString(transform: Transform, sourceType: IcebergType, value: Value): string {
  if (value === null) return 'null';
  switch (transform) {
    case 'year':
      return humanYear(Number(value));
    case 'month':
      return humanMonth(Number(value));
    case 'day':
      return formatDate(Number(value));
    case 'hour':
      return humanHour(Number(value));
    case 'void':
      return 'null';
  }
  if (transform.startsWith('bucket[')) return String(value);
  return humanSourceValue(sourceType, value);
}
