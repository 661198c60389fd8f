/**
 * Calendar arithmetic on Iceberg's epoch-based values (date = days, time/timestamp = µs since
 * 1970-01-01 UTC), in integers only. Written by hand rather than with `Date`: Iceberg dates span
 * ±2^31 days, beyond `Date`'s ±10^8 days, and every step must floor (not truncate) for values before 1970.
 */

export const MICROS_PER_SECOND = 1_000_000n;
export const MICROS_PER_HOUR = 3_600_000_000n;
export const MICROS_PER_DAY = 86_400_000_000n;

export interface CivilDate {
  year: number;
  /** 1–12 */
  month: number;
  /** 1–31 */
  day: number;
}

/** a ÷ b rounded toward −∞ (bigint `/` rounds toward zero). `b` must be positive. */
export function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b < 0n ? q - 1n : q;
}

/** a mod b in [0, b) for positive b. */
export function floorModBig(a: bigint, b: bigint): bigint {
  const r = a % b;
  return r < 0n ? r + b : r;
}

/** Days since 1970-01-01 → proleptic Gregorian date (H. Hinnant's `civil_from_days`). */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Proleptic Gregorian date → days since 1970-01-01 (H. Hinnant's `days_from_civil`). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** µs since epoch → whole days since epoch, flooring (−1 µs is day −1). */
export function microsToDays(micros: bigint): number {
  return Number(floorDivBig(micros, MICROS_PER_DAY));
}

/** µs since epoch → whole hours since epoch, flooring. */
export function microsToHours(micros: bigint): number {
  return Number(floorDivBig(micros, MICROS_PER_HOUR));
}

/** Years since 1970 of a day count (1969-12-31 → −1). */
export function daysToYears(days: number): number {
  return civilFromDays(days).year - 1970;
}

/** Months since 1970-01 of a day count (1969-12-31 → −1). */
export function daysToMonths(days: number): number {
  const { year, month } = civilFromDays(days);
  return (year - 1970) * 12 + month - 1;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** Java's `String.format("%04d", n)`: at least 4 characters, the sign counted. */
export function formatJavaPadded4(n: number): string {
  return n < 0 ? `-${String(-n).padStart(3, '0')}` : String(n).padStart(4, '0');
}

/** The year as `java.time.LocalDate#toString` writes it: 4 digits, `-0001`, `+10000`. */
function formatIsoYear(year: number): string {
  const abs = Math.abs(year);
  if (abs < 1000) return `${year < 0 ? '-' : ''}${String(abs).padStart(4, '0')}`;
  return year > 9999 ? `+${year}` : String(year);
}

/** Day count → `yyyy-MM-dd`, as `LocalDate#toString`. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${formatIsoYear(year)}-${pad2(month)}-${pad2(day)}`;
}

/** µs within a day → `HH:mm[:ss[.SSS|.SSSSSS]]`, as `LocalTime#toString` (it drops zero seconds). */
export function formatTimeOfDay(micros: bigint): string {
  const totalSeconds = Number(micros / MICROS_PER_SECOND);
  const fraction = Number(micros % MICROS_PER_SECOND);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor(totalSeconds / 60) % 60;
  const seconds = totalSeconds % 60;
  let text = `${pad2(hours)}:${pad2(minutes)}`;
  if (seconds > 0 || fraction > 0) {
    text += `:${pad2(seconds)}`;
    if (fraction > 0) {
      text +=
        fraction % 1000 === 0
          ? `.${String(fraction / 1000).padStart(3, '0')}`
          : `.${String(fraction).padStart(6, '0')}`;
    }
  }
  return text;
}

/** µs since epoch → `yyyy-MM-ddTHH:mm[:ss[.fraction]]`, as `LocalDateTime#toString`. */
export function formatTimestamp(micros: bigint): string {
  const days = floorDivBig(micros, MICROS_PER_DAY);
  return `${formatDate(Number(days))}T${formatTimeOfDay(micros - days * MICROS_PER_DAY)}`;
}

const NANOS_PER_SECOND = 1_000_000_000n;
const NANOS_PER_DAY = 86_400n * NANOS_PER_SECOND;

/**
 * ns since epoch (timestamp_ns) → `yyyy-MM-ddTHH:mm[:ss[.SSS|.SSSSSS|.SSSSSSSSS]]`, as
 * `LocalDateTime#toString`: every digit kept, so values a µs apart never print the same. Never throws.
 */
export function formatTimestampNanos(nanos: bigint): string {
  const days = floorDivBig(nanos, NANOS_PER_DAY);
  const ofDay = nanos - days * NANOS_PER_DAY;
  const totalSeconds = Number(ofDay / NANOS_PER_SECOND);
  const fraction = Number(ofDay % NANOS_PER_SECOND);
  let text = `${formatDate(Number(days))}T${pad2(Math.floor(totalSeconds / 3600))}:${pad2(Math.floor(totalSeconds / 60) % 60)}`;
  if (totalSeconds % 60 > 0 || fraction > 0) {
    text += `:${pad2(totalSeconds % 60)}`;
    if (fraction % 1_000_000 === 0 && fraction > 0)
      text += `.${String(fraction / 1_000_000).padStart(3, '0')}`;
    else if (fraction % 1000 === 0 && fraction > 0) text += `.${String(fraction / 1000).padStart(6, '0')}`;
    else if (fraction > 0) text += `.${String(fraction).padStart(9, '0')}`;
  }
  return text;
}
