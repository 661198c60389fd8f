/**
 * The event-time watermark of an aggregate table, kept in its snapshots' summaries beside the
 * committed offsets (and carried forward like them, table/source-offsets.ts):
 *
 *   floe.aggregate.event-times  {"orders":{"0":"1795000000000000","1":"..."}}  max event time (µs) seen per partition
 *   floe.aggregate.watermark    "1794999940000000"                             µs; absent until a record arrived
 *
 * The watermark is the minimum, over the partitions seen, of each one's newest event time, minus the
 * allowed lateness: a partition that lags holds every window open. A Lambda batch does not tell how
 * many partitions the topic has: with the route's `partitions` set, no watermark exists until that
 * many have been seen; without it, the partitions seen so far decide. It never moves back (a partition
 * seen for the first time with old records must not reopen windows already closed and emitted).
 */
import { ValidationError } from '../errors.js';
import type { TableMetadata } from '../spec/types.js';
import { findInAncestry } from '../table/source-offsets.js';

export const EVENT_TIMES_KEY = 'floe.aggregate.event-times';
export const WATERMARK_KEY = 'floe.aggregate.watermark';

/** topic → partition → the newest event time (µs) seen. */
export type EventTimes = Map<string, Map<number, bigint>>;

export function encodeEventTimes(times: EventTimes): string {
  const out: Record<string, Record<string, string>> = {};
  for (const topic of [...times.keys()].sort()) {
    const parts = times.get(topic)!;
    out[topic] = Object.fromEntries(
      [...parts].sort((a, b) => a[0] - b[0]).map(([p, t]) => [String(p), String(t)]),
    );
  }
  return JSON.stringify(out);
}

/** @throws ValidationError for text floe did not write */
export function decodeEventTimes(text: string): EventTimes {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ValidationError(`${EVENT_TIMES_KEY}: not JSON`, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError(`${EVENT_TIMES_KEY}: not an object of topics`);
  }
  const out: EventTimes = new Map();
  for (const [topic, parts] of Object.entries(parsed)) {
    if (typeof parts !== 'object' || parts === null)
      throw new ValidationError(`${EVENT_TIMES_KEY}: bad topic ${topic}`);
    const m = new Map<number, bigint>();
    for (const [p, t] of Object.entries(parts)) {
      if (typeof t !== 'string' || !/^-?\d+$/.test(t))
        throw new ValidationError(`${EVENT_TIMES_KEY}: bad time ${topic}/${p}`);
      m.set(Number(p), BigInt(t));
    }
    out.set(topic, m);
  }
  return out;
}

/** The event times and watermark as of the table's current snapshot (walking back past other writers). */
export function readEventTimes(metadata: TableMetadata): {
  times: EventTimes;
  watermark: bigint | undefined;
} {
  const times = findInAncestry(metadata, EVENT_TIMES_KEY);
  const watermark = findInAncestry(metadata, WATERMARK_KEY);
  if (watermark !== undefined && !/^-?\d+$/.test(watermark))
    throw new ValidationError(`${WATERMARK_KEY}: bad value '${watermark}'`);
  return {
    times: times === undefined ? new Map() : decodeEventTimes(times),
    watermark: watermark === undefined ? undefined : BigInt(watermark),
  };
}

/** The times with a batch's newest event time per partition taken in (neither argument changes). */
export function advanceEventTimes(times: EventTimes, batch: EventTimes): EventTimes {
  const out: EventTimes = new Map([...times].map(([t, parts]) => [t, new Map(parts)]));
  for (const [topic, parts] of batch) {
    const mine = out.get(topic) ?? new Map<number, bigint>();
    for (const [p, t] of parts) {
      const seen = mine.get(p);
      if (seen === undefined || t > seen) mine.set(p, t);
    }
    out.set(topic, mine);
  }
  return out;
}

/**
 * The watermark: min over the partitions seen of their newest event time, minus the lateness, never
 * below `previous`. `previous` while no partition (or fewer than `partitions`) has been seen.
 */
export function computeWatermark(
  times: EventTimes,
  latenessMicros: bigint,
  previous: bigint | undefined,
  partitions?: number,
): bigint | undefined {
  let min: bigint | undefined;
  let seen = 0;
  for (const parts of times.values()) {
    for (const t of parts.values()) {
      seen++;
      if (min === undefined || t < min) min = t;
    }
  }
  // A partition not seen yet may still hold old records: with the count known, wait for all of them.
  if (min === undefined || (partitions !== undefined && seen < partitions)) return previous;
  const mark = min - latenessMicros;
  return previous !== undefined && previous > mark ? previous : mark;
}

/** Whether a window ending at `end` is closed under `watermark`: its end is at or before it. */
export function isClosed(end: bigint, watermark: bigint | undefined): boolean {
  return watermark !== undefined && end <= watermark;
}
