/**
 * A deterministic Debezium change stream over a keyed orders table for the keyed-deletes section: an
 * initial load of `keys` creates (order ids 1..keys) in Lambda-sized batches, then change batches of
 * updates and deletes of random live keys and some inserts of new keys — the shape of a busy OLTP
 * table's change log. Each key stays on one Kafka partition (order id mod partitions), as Debezium keys
 * its topics by the primary key, and offsets run on per partition across the whole stream.
 *
 * Envelopes are built as text around the orders generator's values (no parse and re-stringify of 1M
 * values), and the live keys are kept in an array with swap-removal, so picking and deleting a random
 * live key is O(1) at 10M keys.
 */
import { makeOrderMessages, type OrderMessage } from './orders-batch.js';
import { seededRandom } from '../support/seeded-random.js';

/** Shares of a change batch: the rest of the batch is updates. */
const DELETE_SHARE = 0.25;
const INSERT_SHARE = 0.15;
const SOURCE = '"source":{"connector":"postgresql","db":"shop","schema":"public","table":"orders"}';

export interface KeyedStreamOptions {
  keys: number;
  partitions: number;
  /** Records per initial-load batch (a Lambda batch of these orders is ~6 MB at 10,000). */
  loadBatch: number;
  changesPerBatch: number;
  seed: number;
}

/** What a change batch holds, by kind. */
export interface ChangeCounts {
  updates: number;
  deletes: number;
  inserts: number;
}

export class KeyedChangeStream {
  private readonly offsets: number[];
  private readonly live: number[] = [];
  private nextKey: number;
  private readonly random: () => number;
  private batch = 0;

  constructor(private readonly options: KeyedStreamOptions) {
    this.offsets = new Array<number>(options.partitions).fill(0);
    this.nextKey = options.keys + 1;
    this.random = seededRandom(options.seed);
  }

  /** Live keys after every batch made so far. */
  get liveKeys(): number {
    return this.live.length;
  }

  /** The initial load, one batch of messages at a time (`keys` creates in all). */
  *loadBatches(): Generator<OrderMessage[]> {
    const { keys, loadBatch } = this.options;
    for (let first = 1; first <= keys; first += loadBatch) {
      const count = Math.min(loadBatch, keys - first + 1);
      const values = makeOrderMessages({ records: count, partitions: 1, seed: first, firstOrderId: first });
      const out: OrderMessage[] = [];
      for (let i = 0; i < count; i++) {
        this.live.push(first + i);
        out.push(this.message(first + i, 'c', values[i], null, values[i].value));
      }
      yield out;
    }
  }

  /**
   * The next change batch: `changesPerBatch` changes, each of a different key; `inserted` holds the
   * keys it creates.
   */
  nextChanges(): { messages: OrderMessage[]; counts: ChangeCounts; inserted: number[] } {
    const n = this.options.changesPerBatch;
    const values = makeOrderMessages({
      records: n,
      partitions: 1,
      seed: 1_000_000 + this.batch++,
      firstOrderId: 0,
    });
    const counts: ChangeCounts = { updates: 0, deletes: 0, inserts: 0 };
    const touched = new Set<number>();
    const messages: OrderMessage[] = [];
    const inserted: number[] = [];
    for (let i = 0; i < n; i++) {
      const roll = this.random();
      if (roll < INSERT_SHARE || this.live.length === 0) {
        const key = this.nextKey++;
        this.live.push(key);
        touched.add(key);
        inserted.push(key);
        messages.push(this.message(key, 'c', values[i], null, withOrderId(values[i].value, key)));
        counts.inserts++;
        continue;
      }
      const at = this.pickUntouched(touched);
      const key = this.live[at];
      touched.add(key);
      if (roll < INSERT_SHARE + DELETE_SHARE) {
        // Swap-remove: the live set stays an array, any order.
        this.live[at] = this.live[this.live.length - 1];
        this.live.pop();
        messages.push(this.message(key, 'd', values[i], `{"order_id":${key}}`, null));
        counts.deletes++;
      } else {
        messages.push(this.message(key, 'u', values[i], null, withOrderId(values[i].value, key)));
        counts.updates++;
      }
    }
    return { messages, counts, inserted };
  }

  /** A random live key's index no change of this batch has touched yet. */
  private pickUntouched(touched: Set<number>): number {
    for (;;) {
      const at = Math.floor(this.random() * this.live.length);
      if (!touched.has(this.live[at])) return at;
    }
  }

  private message(
    key: number,
    op: 'c' | 'u' | 'd',
    template: OrderMessage,
    before: string | null,
    after: string | null,
  ): OrderMessage {
    const partition = key % this.options.partitions;
    const ts = template.timestampMs;
    return {
      partition,
      index: this.offsets[partition]++,
      timestampMs: ts,
      key: `{"order_id":${key}}`,
      value: `{"before":${before ?? 'null'},"after":${after ?? 'null'},"op":"${op}","ts_ms":${ts},${SOURCE}}`,
      headers: template.headers,
    };
  }
}

/** An order value (the generator's JSON text, order_id first) with another order id. */
function withOrderId(value: string, orderId: number): string {
  const comma = value.indexOf(',');
  return `{"order_id":${orderId}${value.slice(comma)}`;
}
