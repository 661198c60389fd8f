/** Where a partition stands for a consumer: committed position, watermarks, lag; pure. */

export interface PartitionProgress {
  topic: string;
  partition: number;
  /** The next offset to read as committed (the group's offset); undefined while none is committed. */
  committed?: bigint;
  low?: bigint;
  high?: bigint;
  /** The high watermark when the consumer joined (what `latest` started from). */
  startHigh?: bigint;
}

export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Records between the committed position and the high watermark (undefined while unknown). */
export function lagOf(p: PartitionProgress, startingPosition: string): bigint | undefined {
  if (p.high === undefined) return undefined;
  const from =
    p.committed ??
    (startingPosition === 'trim-horizon' ? p.low : startingPosition === 'latest' ? p.startHigh : undefined);
  if (from === undefined) return undefined;
  return p.high > from ? p.high - from : 0n;
}

/**
 * Everything available is committed. A partition with no committed offset counts as caught up only
 * when nothing arrived since it started (`latest`) or it holds nothing (`trim-horizon`); `at-timestamp`
 * partitions wait for their first commit unless empty.
 */
export function isCaughtUp(p: PartitionProgress, startingPosition: string): boolean {
  if (p.high === undefined) return false;
  if (p.committed !== undefined) return p.committed >= p.high;
  if (p.low !== undefined && p.low >= p.high) return true;
  return startingPosition === 'latest' && p.startHigh !== undefined && p.startHigh >= p.high;
}
