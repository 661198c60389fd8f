/**
 * kill -9 between a CDC batch's main commit and its index commit: a real `floe ingest` child is
 * SIGKILLed at each step (the FLOE_TEST_PAUSE_AT hook, functions/core/key-index/pause-point.ts), then
 * the next batch runs, and afterwards the table equals the model and the index agrees with a full
 * scan (`floe index verify`): behind at worst, never wrong. One warehouse for the whole file; the
 * batches after a kill run in this process (only the killed ones need a child of their own).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as cli } from '../../../functions/cli/main.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { indexStatus, verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import type { PausePoint } from '../../../functions/core/key-index/pause-point.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';
import { type Change, modelRows, rowsOf, TOPIC, upsertRoute } from '../../support/upsert-table.js';

const ROOT = join(import.meta.dirname, '../../..');
// The pinned Node 22 with tsx as a loader: one process, the one SIGKILL reaches (tsx's own CLI would
// run the CLI in a grandchild that outlives the kill).
const NODE = join(ROOT, 'node_modules/.bin/node');
const MAIN = join(ROOT, 'functions/cli/main.ts');

const POINTS: PausePoint[] = ['after-main-commit', 'after-index-write', 'after-index-commit'];

/** Batch i: upserts and deletes over keys 1..8, each key's value naming the batch. */
function batch(i: number): Change[] {
  return Array.from({ length: 8 }, (_, k): Change => [k + 1, (k + i) % 3 === 0 ? null : `v${i}`]);
}

/** Runs `floe ingest` on an event file in a child, SIGKILLs it once it pauses at `point`; resolves with how it ended. */
function ingestKilledAt(point: PausePoint, args: string[], marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['--import', 'tsx', MAIN, 'ingest', ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        FLOE_TEST_PAUSE_AT: point,
        FLOE_TEST_PAUSE_FILE: marker,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const poll = setInterval(() => {
      if (existsSync(marker)) child.kill('SIGKILL');
    }, 25);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearInterval(poll);
      resolve(signal === 'SIGKILL' ? 'killed' : `exited ${code}: ${stderr}`);
    });
  });
}

/** One table per kill point, with its own model and offsets. */
class KilledTable {
  readonly route;
  readonly model = new Map<number, string>();
  private offset = 0;
  private events = 0;
  constructor(
    readonly dir: string,
    readonly name: string,
  ) {
    this.route = upsertRoute(name);
  }

  /** Writes batch i as an event file at the next offsets (the model follows); returns its path. */
  eventFile(i: number): string {
    const changes = batch(i);
    const values = changes.map(([id, v]) => (v === null ? null : { id, v }));
    const key = (_v: unknown, n: number) => JSON.stringify({ id: changes[n][0] });
    const path = join(this.dir, `${this.name}-${this.events++}.json`);
    writeFileSync(path, JSON.stringify(jsonEvent(TOPIC, values, { firstOffset: this.offset, key })));
    this.offset += changes.length;
    for (const [id, v] of changes) {
      if (v === null) this.model.delete(id);
      else this.model.set(id, v);
    }
    return path;
  }

  /** Batch i's event, as a child would read it. */
  event(i: number): unknown {
    return JSON.parse(readFileSync(this.eventFile(i), 'utf8'));
  }

  /** The `floe ingest` arguments of batch i. */
  ingestArgs(i: number): string[] {
    const schema = join(this.dir, 'schema.json');
    const flags = ['--schema', schema, '--mode', 'upsert', '--identifier', 'id'];
    return [this.eventFile(i), '--warehouse', this.dir, '--table', `shop.${this.name}`, ...flags];
  }
}

describe('kill -9 between the main commit and the index commit', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const tables = new Map<PausePoint, KilledTable>();
  const ended = new Map<PausePoint, string>();

  beforeAll(async () => {
    wh = await tempWarehouse();
    writeFileSync(join(wh.dir, 'schema.json'), JSON.stringify(upsertRoute('x').schema));
    for (const [n, point] of POINTS.entries()) {
      const table = new KilledTable(wh.dir, `killed_${n}`);
      tables.set(point, table);
      // The first batch, whole: the table and its index exist.
      const report = await ingestEvent({ catalog: wh.catalog, routes: [table.route] }, table.event(0));
      expect(report.tables[0]?.status).toBe('committed');
    }
    // The killed batches, one child per table, at once (a child's start is most of the time).
    await Promise.all(
      POINTS.map(async (point, n) => {
        const table = tables.get(point)!;
        ended.set(point, await ingestKilledAt(point, table.ingestArgs(1), join(wh.dir, `paused-${n}`)));
      }),
    );
  });
  afterAll(() => wh.cleanup());

  for (const point of POINTS) {
    it(`at ${point}: the next batch and the index are right`, async () => {
      // Prepare
      const table = tables.get(point)!;
      const { route } = table;
      const main = await wh.catalog.loadTable(route.table);
      const behind = (await indexStatus(wh.catalog, main)).behind;

      // Act: the next batch, in this process; then `floe index verify`.
      const next = await ingestEvent({ catalog: wh.catalog, routes: [route] }, table.event(2));
      const verify = await cli(['index', '--warehouse', wh.dir, '--table', `shop.${table.name}`, 'verify']);

      // Assess
      expect(ended.get(point)).toBe('killed');
      expect(behind).toBe(point === 'after-index-commit' ? 0 : 1);
      expect(next.tables[0]?.status).toBe('committed');
      expect(await rowsOf(wh, route)).toEqual(modelRows(table.model));
      expect(verify).toBe(0);
      const after = await wh.catalog.loadTable(route.table);
      expect((await indexStatus(wh.catalog, after)).behind).toBe(0);
      expect(await verifyIndex(wh.catalog, await wh.catalog.loadTable(route.table))).toEqual([]);
    });
  }
});
