/**
 * The CLI's numeric flag values: one reader of integers and one of durations, so a flag's syntax and its
 * error read the same in every command. Errors name the flag (a UsageError: the command exits 2).
 */
import { UsageError } from './options.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

export const DAY_MS = UNIT_MS.d;

/**
 * A duration in milliseconds (rounded): `500ms`, `90s`, `1.5m`, `6h`, `3d`, `2w`, or `0`; spaces around
 * it are ignored.
 * @throws UsageError naming `flag` for any other text
 */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(trimmed);
  if (!match) {
    throw new UsageError(
      `${flag} must be a duration like 90s, 30m, 6h or 3d (units ms, s, m, h, d, w), got '${text}'`,
    );
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2]]);
}

/**
 * A whole number written in decimal digits (no sign, point, exponent or spaces), from `min` to `max`.
 * @throws UsageError naming `flag` for other text or a number out of range
 */
export function parseInteger(text: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be an integer ${range}, got '${text}'`);
  }
  return n;
}
