/**
 * `emit`: the windows an aggregate table's snapshot closed, produced to the result topic after the
 * commit (key = group columns + window_start as JSON, value = the row as JSON; window-json.ts).
 *
 * Semantics: at least once, with a stable key. The commit comes first, so a crash (or a failed
 * produce) after it leaves the windows closed but not emitted; the batch then fails or is redelivered,
 * finds its snapshot by `floe.batch-id`, and re-emits the windows THAT snapshot closed (window_end in
 * (parent's watermark, its watermark]) with the same keys. A consumer that keeps the newest message per
 * key (a compacted topic, an upsert sink) sees each window exactly once. Redelivery after the batch's
 * snapshot expired emits nothing more (keep `history.expire.max-snapshot-age-ms` above the ESM's retry span).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { LakeError, TransientIOError, ValidationError } from '../errors.js';
import type { MessageProducer } from '../kafka/message-producer.js';
import type { TableRoute } from '../routing/routes.js';
import { planScan } from '../scan/plan-scan.js';
import { readScanRows } from '../scan/read-scan.js';
import { ancestors } from '../spec/metadata.js';
import type { Row } from '../spec/types.js';
import { BATCH_ID_KEY } from '../table/source-offsets.js';
import type { AggregateConfig, EmitConfig } from '../sql/aggregate-config.js';
import { WATERMARK_KEY } from './watermark.js';
import { windowKeyJson, windowValueJson } from './window-json.js';

/** Where emitted windows go: one call per batch's closed windows, in window order. */
export type WindowSender = (topic: string, messages: { key: string; value: string }[]) => Promise<void>;

const producers = new Map<string, Promise<MessageProducer>>();

/** Where and how the producer connects (the brokers, TLS, and MSK IAM in the function's region). */
export type EmitConnection = Pick<EmitConfig, 'bootstrapServers' | 'auth' | 'tls'>;

async function connect(to: EmitConnection): Promise<MessageProducer> {
  // Loaded on first emit only: functions without an emitting route never load the Kafka client.
  const { connectMessageProducer } = await import('../kafka/message-producer.js');
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (to.auth === 'aws-msk-iam' && !region) {
    throw new ValidationError("emit with auth aws-msk-iam needs the cluster's region: AWS_REGION is not set");
  }
  // The producer keeps order and waits for all replicas: records of one window are never reordered or lost.
  return connectMessageProducer({
    brokers: to.bootstrapServers,
    clientId: 'floe-emit',
    ...(to.tls ? { tls: {} } : {}),
    ...(to.auth === 'aws-msk-iam' ? { sasl: { mechanism: 'aws-msk-iam' as const, region: region! } } : {}),
  });
}

/** A sender to the brokers, connected once per process (a warm Lambda reuses it). */
export function kafkaSender(to: EmitConnection): WindowSender {
  return async (topic, messages) => {
    const key = `${to.auth}${to.tls ? '+tls' : ''}@${to.bootstrapServers.join(',')}`;
    let producer = producers.get(key);
    if (!producer) {
      producer = connect(to);
      producers.set(key, producer);
      producer.catch(() => producers.delete(key));
    }
    try {
      await (await producer).send(topic, messages);
    } catch (cause) {
      // A setting that cannot work (no region for MSK IAM) fails as it is: a retry cannot help.
      if (cause instanceof LakeError && !cause.retryable) throw cause;
      throw new TransientIOError(
        `emit to ${topic}: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
  };
}

/** Disconnects the producers emit opened (the CLI and tests, before they exit). */
export async function closeWindowProducers(): Promise<void> {
  const all = [...producers.values()];
  producers.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.disconnect()));
}

/** The windows the snapshot that committed `batchId` closed (its watermark's step), read with pruning. */
export async function windowsClosedByBatch(table: LoadedTable, batchId: string): Promise<Row[]> {
  const chain = ancestors(table.metadata);
  const i = chain.findIndex((s) => s.summary[BATCH_ID_KEY] === batchId);
  if (i < 0) return [];
  const mark = chain[i].summary[WATERMARK_KEY];
  if (mark === undefined) return [];
  const previous = chain.slice(i + 1).find((s) => s.summary[WATERMARK_KEY] !== undefined)?.summary[
    WATERMARK_KEY
  ];
  if (previous === mark) return [];
  const upTo = { op: 'lt-eq', term: 'window_end', value: BigInt(mark) } as const;
  const filter =
    previous === undefined
      ? upTo
      : ({
          op: 'and',
          left: { op: 'gt', term: 'window_end', value: BigInt(previous) },
          right: upTo,
        } as const);
  const rows = await readScanRows(table, await planScan(table, { filter }), { filter });
  return rows.filter((r) => r.window_closed === true);
}

/**
 * Emits the windows a batch closed: `closed` when it committed now, else (a redelivery of a batch
 * already committed) the ones its snapshot closed.
 * @throws TransientIOError when producing fails (retryable: the redelivery emits again)
 */
export async function emitClosedWindows(
  catalog: Catalog,
  route: TableRoute,
  aggregate: AggregateConfig,
  batchId: string,
  status: 'committed' | 'already-committed' | 'nothing-to-commit',
  closed: Row[],
  send: WindowSender | undefined = aggregate.emit ? kafkaSender(aggregate.emit) : undefined,
): Promise<number> {
  const emit = aggregate.emit;
  if (!emit || !send) return 0;
  const rows =
    status === 'committed'
      ? closed
      : await windowsClosedByBatch(await catalog.loadTable(route.table), batchId);
  if (rows.length === 0) return 0;
  const { plan } = aggregate;
  await send(
    emit.topic,
    rows.map((row) => ({ key: windowKeyJson(plan, row), value: windowValueJson(plan, row) })),
  );
  return rows.length;
}
