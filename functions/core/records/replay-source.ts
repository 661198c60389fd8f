/**
 * The two headers every replayed record carries, and the checkpoint they make of the target topic:
 * - `floe-source` = `topic/partition/offset` of the source record the row came from (the lineage a
 *   consumer of the target sees);
 * - `floe-checkpoint` on the last record of each batch sent to a target partition: for every source
 *   topic-partition ever replayed into that target partition, the last source offset it holds.
 *
 * Why the second header: with `--partitioning same` two topics' partition 0 both feed target
 * partition 0, and with `key` every source partition feeds every target partition. The last
 * `floe-source` of a target partition names only the source written last; the others' positions may
 * lie arbitrarily far back. The checkpoint header makes the tail record of each target partition
 * describe all of them, so a restart reads one record per target partition. A batch to one partition
 * is appended atomically, so the tail record of a partition replay wrote always carries it.
 */
import { ValidationError } from '../errors.js';

export const SOURCE_HEADER = 'floe-source';
export const CHECKPOINT_HEADER = 'floe-checkpoint';

export interface SourcePosition {
  topic: string;
  partition: number;
  offset: bigint;
}

/** topic → partition → last source offset replayed (inclusive), for one target partition. */
export type Checkpoint = Map<string, Map<number, bigint>>;

export function formatSource(p: SourcePosition): string {
  return `${p.topic}/${p.partition}/${p.offset}`;
}

/**
 * Reads a `floe-source` value. Topic names cannot hold `/` (Kafka allows `[a-zA-Z0-9._-]`), but the
 * text is split from the right anyway so a stray one fails on the numbers, not silently.
 * @throws ValidationError for text floe did not write
 */
export function parseSource(text: string): SourcePosition {
  const parts = text.split('/');
  const offset = parts.pop();
  const partition = parts.pop();
  const topic = parts.join('/');
  if (!topic || partition === undefined || !/^\d+$/.test(partition) || !offset || !/^\d+$/.test(offset)) {
    throw new ValidationError(`${SOURCE_HEADER} header '${text}' is not topic/partition/offset`);
  }
  return { topic, partition: Number(partition), offset: BigInt(offset) };
}

/** The checkpoint header's text: `{"orders":{"0":"41"}}` (offsets as strings: JSON numbers round past 2^53). */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const out: Record<string, Record<string, string>> = {};
  for (const [topic, partitions] of [...checkpoint].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const entry: Record<string, string> = {};
    for (const [partition, offset] of [...partitions].sort(([a], [b]) => a - b)) {
      entry[String(partition)] = offset.toString();
    }
    out[topic] = entry;
  }
  return JSON.stringify(out);
}

/** @throws ValidationError for text floe did not write */
export function parseCheckpoint(text: string): Checkpoint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${CHECKPOINT_HEADER} header is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError(`${CHECKPOINT_HEADER} header is not an object of topics`);
  }
  const checkpoint: Checkpoint = new Map();
  for (const [topic, partitions] of Object.entries(parsed)) {
    if (typeof partitions !== 'object' || partitions === null || Array.isArray(partitions)) {
      throw new ValidationError(`${CHECKPOINT_HEADER} header: topic ${topic} holds no partitions`);
    }
    const map = new Map<number, bigint>();
    for (const [partition, offset] of Object.entries(partitions)) {
      if (!/^\d+$/.test(partition) || typeof offset !== 'string' || !/^\d+$/.test(offset)) {
        throw new ValidationError(`${CHECKPOINT_HEADER} header: ${topic}/${partition} is not an offset`);
      }
      map.set(Number(partition), BigInt(offset));
    }
    checkpoint.set(topic, map);
  }
  return checkpoint;
}

/** Records `position` into the checkpoint (keeps the higher offset: offsets only grow per source). */
export function advanceCheckpoint(checkpoint: Checkpoint, position: SourcePosition): void {
  let partitions = checkpoint.get(position.topic);
  if (!partitions) {
    partitions = new Map();
    checkpoint.set(position.topic, partitions);
  }
  const last = partitions.get(position.partition);
  if (last === undefined || position.offset > last) partitions.set(position.partition, position.offset);
}

/** Whether the target partition with this checkpoint already holds the source record. */
export function alreadyReplayed(checkpoint: Checkpoint | undefined, position: SourcePosition): boolean {
  const last = checkpoint?.get(position.topic)?.get(position.partition);
  return last !== undefined && position.offset <= last;
}

/** One header of a record read back from the target. */
export interface ReadBackHeader {
  key: string;
  value: Uint8Array | null;
}

/**
 * The checkpoint a target partition's tail describes: the newest record (of `records`, oldest first)
 * that replay wrote with a checkpoint header, plus the `floe-source` of every replayed record after it
 * (a foreign writer's records, without headers, are passed over). Undefined when no record in
 * `records` carries a checkpoint header (read further back, or the partition holds no replay yet).
 * @throws ValidationError for headers floe did not write
 */
export function checkpointFromTail(records: { headers: ReadBackHeader[] }[]): Checkpoint | undefined {
  const text = (h: ReadBackHeader | undefined) =>
    h?.value === null || h === undefined ? undefined : Buffer.from(h.value).toString('utf8');
  for (let i = records.length - 1; i >= 0; i--) {
    const header = text(records[i].headers.find((h) => h.key === CHECKPOINT_HEADER));
    if (header === undefined) continue;
    const checkpoint = parseCheckpoint(header);
    for (const r of records.slice(i)) {
      const source = text(r.headers.find((h) => h.key === SOURCE_HEADER));
      if (source !== undefined) advanceCheckpoint(checkpoint, parseSource(source));
    }
    return checkpoint;
  }
  return undefined;
}
