/**
 * How fresh a live view is: the newest record timestamp of its Kafka tail, the offsets it read up to
 * (each partition's high watermark at read time: every offset below is in the table or in the tail),
 * and the tail's size, which is the lag of the committed table that the live view closes. Put in the
 * live snapshot's summary (live-snapshot.ts) so any engine reading it through `floe serve --live` can
 * tell, and printed by `floe scan --live`. Pure.
 */
/** Summary keys of the live snapshot's freshness. */
export const LIVE_NEWEST_RECORD_KEY = 'floe.live.newest-record-ms';
export const LIVE_READ_UP_TO_KEY = 'floe.live.read-up-to';
export const LIVE_HOT_RECORDS_KEY = 'floe.live.hot-records';

export interface LiveFreshness {
  /** The highest record timestamp of the tail (ms); null when the tail holds no record with one. */
  newestRecordMs: number | null;
  /** topic → partition → the high watermark read up to (exclusive). */
  readUpTo: { topic: string; partition: number; readUpTo: bigint }[];
  /** Records read from Kafka for the tail: offsets the committed table does not hold yet. */
  hotRecords: number;
}

/** The newest timestamp of records (-1, no timestamp, and non-finite values left out). Never throws. */
export function newestTimestamp(records: Iterable<{ timestamp: number }>): number | null {
  let newest: number | null = null;
  for (const r of records) {
    if (Number.isFinite(r.timestamp) && r.timestamp >= 0 && (newest === null || r.timestamp > newest))
      newest = r.timestamp;
  }
  return newest;
}

/** The offsets read up to as summary text, `{"t":{"0":"13","1":"9"}}`, topics and partitions in order. */
export function describeReadUpTo(readUpTo: LiveFreshness['readUpTo']): string {
  const out: Record<string, Record<string, string>> = {};
  const sorted = [...readUpTo].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  for (const p of sorted) {
    out[p.topic] ??= {};
    out[p.topic][String(p.partition)] = String(p.readUpTo);
  }
  return JSON.stringify(out);
}

/** The freshness entries of a live snapshot's summary. Never throws. */
export function freshnessSummary(freshness: LiveFreshness): Record<string, string> {
  return {
    ...(freshness.newestRecordMs === null
      ? {}
      : { [LIVE_NEWEST_RECORD_KEY]: String(freshness.newestRecordMs) }),
    [LIVE_READ_UP_TO_KEY]: describeReadUpTo(freshness.readUpTo),
    [LIVE_HOT_RECORDS_KEY]: String(freshness.hotRecords),
  };
}
