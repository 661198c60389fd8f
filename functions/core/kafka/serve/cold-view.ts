/**
 * Which offsets the proxy answers from a table ("cold") and which go to the cluster. `committed`:
 * every offset inside the table's committed ranges (source-offsets.ts). `below`: per partition, every
 * offset below a given one — standing in for the cluster's retention (nothing of the cluster's log
 * below it is served), so an offset below it that the table does not hold either is out of range.
 * The tables are reloaded at most once a second, so a table still being written serves what it has.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { ValidationError } from '../../errors.js';
import type { OffsetRange } from '../../table/offset-ranges.js';
import { readCommittedOffsets } from '../../table/source-offsets.js';
import type { TimeAnswer } from './time-lookup.js';

export type ColdBoundary = { kind: 'committed' } | { kind: 'below'; offsets: Map<number, bigint> };

export type ColdDecision =
  | { kind: 'upstream' }
  | { kind: 'out-of-range' }
  /** Served from `table` up to `last` (inclusive); past what the table holds, go upstream at last + 1. */
  | { kind: 'table'; table: LoadedTable; last: bigint };

const RELOAD_MS = 1_000;

interface TopicState {
  table: LoadedTable;
  ranges: Map<number, OffsetRange[]>;
}

export class ColdView {
  private topics = new Map<string, TopicState>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly tables: readonly (() => Promise<LoadedTable>)[],
    private readonly boundary: ColdBoundary,
    /** The lowest offset the table holds of a partition in [0, below), if any. */
    private readonly firstHeld: (
      table: LoadedTable,
      topic: string,
      partition: number,
      below: bigint,
    ) => Promise<bigint | undefined>,
    /** The table's smallest offset of a partition in [0, below) with a timestamp ≥ T ms (time-lookup.ts). */
    private readonly atTime: (
      table: LoadedTable,
      topic: string,
      partition: number,
      below: bigint,
      timestampMs: bigint,
    ) => Promise<TimeAnswer | undefined> = async () => undefined,
  ) {}

  private readonly firsts = new Map<string, bigint | undefined>();

  /** The table's first offset below the boundary `below` (once per table version and partition). */
  private async firstBelow(
    state: TopicState,
    topic: string,
    partition: number,
    below: bigint,
  ): Promise<bigint | undefined> {
    const key = `${state.table.metadataLocation}\u0000${topic}\u0000${partition}`;
    if (!this.firsts.has(key)) {
      if (this.firsts.size > 10_000) this.firsts.clear();
      this.firsts.set(key, await this.firstHeld(state.table, topic, partition, below));
    }
    return this.firsts.get(key);
  }

  /**
   * Loads the tables now (at start-up, so a bad table fails the command, not the first fetch).
   * @throws ValidationError when two tables hold one topic; catalog errors as loadTable
   */
  async load(): Promise<void> {
    const topics = new Map<string, TopicState>();
    for (const load of this.tables) {
      const table = await load();
      for (const [topic, partitions] of readCommittedOffsets(table.metadata)) {
        const other = topics.get(topic);
        if (other && other.table.metadataLocation !== table.metadataLocation)
          throw new ValidationError(
            `tables ${other.table.identifier.name} and ${table.identifier.name} both hold topic '${topic}': serve one of them`,
          );
        topics.set(topic, { table, ranges: partitions });
      }
    }
    this.topics = topics;
    this.loadedAt = Date.now();
  }

  private async fresh(): Promise<void> {
    if (Date.now() - this.loadedAt < RELOAD_MS) return;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    await this.loading;
  }

  /** The topics the tables hold. */
  topicNames(): string[] {
    return [...this.topics.keys()];
  }

  /** Where a fetch of `topic`/`partition` at `offset` is answered from. @throws as load */
  async decide(topic: string, partition: number, offset: bigint): Promise<ColdDecision> {
    await this.fresh();
    const state = this.topics.get(topic);
    const ranges = state?.ranges.get(partition) ?? [];
    if (this.boundary.kind === 'committed') {
      const range = ranges.find(([a, b]) => offset >= a && offset <= b);
      return state && range ? { kind: 'table', table: state.table, last: range[1] } : { kind: 'upstream' };
    }
    const below = this.boundary.offsets.get(partition);
    if (below === undefined || offset >= below) return { kind: 'upstream' };
    const first = state && (await this.firstBelow(state, topic, partition, below));
    if (!state || first === undefined || offset < first) return { kind: 'out-of-range' };
    return { kind: 'table', table: state.table, last: below - 1n };
  }

  /**
   * The ListOffsets EARLIEST answer given upstream's (-1 when upstream had none): the table's first
   * committed offset when lower (`committed`); with a `--cold-below` offset, the first offset the
   * table holds below it, or else the boundary itself (nothing of upstream's below it is served).
   */
  async earliest(topic: string, partition: number, upstream: bigint): Promise<bigint> {
    await this.fresh();
    const state = this.topics.get(topic);
    if (this.boundary.kind === 'committed') {
      const first = state?.ranges.get(partition)?.[0]?.[0];
      return first !== undefined && (upstream < 0n || first < upstream) ? first : upstream;
    }
    const below = this.boundary.offsets.get(partition);
    if (below === undefined) return upstream;
    const first = state && (await this.firstBelow(state, topic, partition, below));
    if (first !== undefined) return first;
    return upstream >= below ? upstream : below;
  }

  /**
   * The ListOffsets answer to a lookup by time T ≥ 0 given upstream's (undefined when upstream had
   * none), or undefined to pass upstream's through. `committed`: the table's earliest match in its
   * committed ranges when lower than upstream's. With a `--cold-below` offset: the table's earliest
   * match below it; else, when upstream's answer lies below it (bytes not served), the boundary itself
   * with no timestamp (the first offset served from the cluster); upstream's "none" stays none.
   * @throws as load, and what the lookup throws (time-lookup.ts)
   */
  async byTime(
    topic: string,
    partition: number,
    timestampMs: bigint,
    upstream: bigint | undefined,
  ): Promise<TimeAnswer | undefined> {
    await this.fresh();
    const state = this.topics.get(topic);
    if (this.boundary.kind === 'committed') {
      const last = state?.ranges.get(partition)?.at(-1)?.[1];
      if (!state || last === undefined) return undefined;
      const found = await this.atTime(state.table, topic, partition, last + 1n, timestampMs);
      return found && (upstream === undefined || upstream < 0n || found.offset < upstream)
        ? found
        : undefined;
    }
    const below = this.boundary.offsets.get(partition);
    if (below === undefined) return undefined;
    const found = state && (await this.atTime(state.table, topic, partition, below, timestampMs));
    if (found) return found;
    return upstream !== undefined && upstream >= 0n && upstream < below
      ? { offset: below, timestampMs: -1n }
      : undefined;
  }
}
