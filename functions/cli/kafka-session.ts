/**
 * What a long-running Kafka command (`floe run`, `floe backfill`) does around its batches: the status
 * line, handing formed events to the Lambda's ingest code, stopping on signals, and the catalog + lock.
 */
import { ingestEvent, type IngestEventOptions, type IngestEventReport } from '../core/ingest/ingest-event.js';
import { type FormedEvent, spanStartsOf } from '../core/kafka/esm-batch.js';
import { createProcessLock } from '../core/kafka/process-lock.js';
import { openCatalog } from './catalog-options.js';
import type { ParsedOptions } from './options.js';
import { onStopSignals } from './stop-signal.js';

/** Writes status: one line rewritten in place on a terminal, nothing between batches otherwise. */
export class StatusLine {
  private shown = false;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}
  get live(): boolean {
    return this.stream.isTTY === true;
  }
  show(text: string): void {
    if (!this.live) return;
    const width = this.stream.columns ?? 120;
    this.stream.write(`\r\x1b[K${text.length >= width ? `${text.slice(0, width - 2)}…` : text}`);
    this.shown = true;
  }
  /** A log line; on a terminal it goes above the status line. */
  log(text: string, stream: NodeJS.WriteStream = process.stdout): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    stream.write(`${text}\n`);
  }
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

/**
 * How `floe run` and `floe backfill` hand a formed event to the Lambda's ingest code: with the
 * consumer's fetch starts (they close offset gaps, span-starts.ts) and warnings on the status line.
 */
export function ingestFormed(
  target: Pick<IngestEventOptions, 'catalog' | 'routes' | 'lock'>,
  status: StatusLine,
): (formed: FormedEvent) => Promise<IngestEventReport> {
  return (formed) =>
    ingestEvent(
      {
        ...target,
        spanStarts: spanStartsOf(formed),
        onWarning: (table, message) => status.log(`warning: ${table}: ${message}`, process.stderr),
      },
      formed.event,
    );
}

export function describeSpans(formed: FormedEvent): string {
  return formed.spans
    .map((s) => `${s.topic}-${s.partition}@${s.first}${s.last === s.first ? '' : `..${s.last}`}`)
    .join(', ');
}

/** One line per table of an ingested event (the log when no terminal shows the live status). */
export function describeReport(report: IngestEventReport): string {
  return report.tables
    .map((t) => {
      const outcome =
        t.status === 'committed'
          ? `snapshot ${t.snapshotId}`
          : t.status === 'already-committed'
            ? 'already committed'
            : 'nothing new';
      return `${t.table}: ${t.rowsWritten} rows, ${t.skippedAsReplayed} replayed, ${t.deadLettered} dead-lettered; ${outcome}`;
    })
    .join('; ');
}

/**
 * Stops cleanly on the first SIGINT/SIGTERM (the signal aborts); a second one exits at once — still
 * safe: the group offsets never run ahead of the tables.
 */
export function stopOnSignals(controller: AbortController, onStop: (signal: string) => void): () => void {
  return onStopSignals(
    (signal) => {
      onStop(signal);
      controller.abort();
    },
    (signal) => `floe: ${signal} again: exiting now (the table skips whatever is redelivered)`,
  );
}

/**
 * The catalog the flags select (as for every other command) and the lock the commits take: the
 * DynamoDB lock when one is configured, else an in-process one (partitions consumed concurrently
 * commit to one table one at a time instead of conflicting).
 */
export async function openKafkaCatalog(values: ParsedOptions) {
  const opened = await openCatalog(values, { withLock: true });
  return { catalog: opened.catalog, lock: opened.lock ?? createProcessLock() };
}
