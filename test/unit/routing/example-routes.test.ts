/**
 * The example routes files under events/routes/ (the ones the README points users to): each is valid
 * by the route schema (floe's own check and Ajv through its `$schema`), and drives one batch of the
 * matching sample events through `floe ingest --routes FILE` into the embedded catalog, landing where
 * the file says. Expected rows are counted from the sample events themselves.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';

const EVENTS = path.resolve(import.meta.dirname, '../../../events');
const example = (name: string) => path.join(EVENTS, 'routes', name);
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

interface SampleRecord {
  value: Record<string, unknown> | undefined;
  headers: Record<string, string>;
}

/** The records of a sample event as a reader sees them: the JSON value (undefined if not JSON), headers. */
function sampleRecords(file: string): SampleRecord[] {
  const event = readJson(path.join(EVENTS, file));
  return Object.values(event.records as Record<string, { value?: string; headers: object[] }[]>)
    .flat()
    .map((r) => {
      let value: Record<string, unknown> | undefined;
      try {
        value = JSON.parse(Buffer.from(r.value ?? '', 'base64').toString('utf8'));
      } catch {
        value = undefined;
      }
      const headers = Object.fromEntries(
        r.headers.flatMap((h) =>
          Object.entries(h).map(([k, bytes]) => [k, Buffer.from(bytes as number[]).toString('utf8')]),
        ),
      );
      return { value, headers };
    });
}

describe('example routes files (events/routes/)', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let err: string[];
  beforeEach(async () => {
    wh = await tempWarehouse();
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await wh.cleanup();
  });

  const rowsOf = async (table: string) => {
    const [namespace, name] = table.split('.');
    const loaded = await wh.catalog.loadTable({ namespace: [namespace!], name: name! });
    return readScanRows(loaded, await planScan(loaded));
  };
  const ingest = async (routes: string, events: string) =>
    main(['ingest', '--warehouse', wh.dir, '--routes', example(routes), path.join(EVENTS, events)]);

  it.each(['orders-append.json', 'orders-cdc.json', 'orders-by-country.json', 'orders-aggregate.json'])(
    '%s is valid by the route schema, for floe and for Ajv through its $schema',
    (name) => {
      // Prepare
      const file = readJson(example(name));
      const schema = readJson(path.resolve(path.dirname(example(name)), file.$schema));

      // Act
      const valid = new Ajv({ strict: true }).compile(schema)(file);
      const routes = parseRoutes(file);

      // Assess
      expect(valid).toBe(true);
      expect(routes.length).toBe(file.routes.length);
    },
  );

  it('orders-append.json: every sample order lands once, partitioned by day, with the source header', async () => {
    // Prepare
    const records = sampleRecords('orders-batch-1.json');

    // Act
    const code = await ingest('orders-append.json', 'orders-batch-1.json');

    // Assess
    expect(code, err.join('')).toBe(0);
    const rows = await rowsOf('sales.orders');
    expect(rows.length).toBeGreaterThan(0);
    const dead = rows.length < records.length ? (await rowsOf('sales.orders__dlq')).length : 0;
    expect(rows.length + dead).toBe(records.length);
    const first = records.find((r) => r.value?.order_id !== undefined)!;
    const row = rows.find((r) => r.order_id === BigInt(first.value!.order_id as number))!;
    expect(row.source_service).toBe(first.headers.source);
    const table = await wh.catalog.loadTable({ namespace: ['sales'], name: 'orders' });
    expect(table.metadata['partition-specs'].at(-1)?.fields.map((f) => f.transform)).toEqual(['day']);
  });

  it('orders-cdc.json: the change events become the current rows, keyed by order_id', async () => {
    // Prepare: the current state of each order from the change events themselves
    const current = new Map<unknown, boolean>();
    for (const { value } of sampleRecords('orders-cdc-1.json')) {
      if (!value) continue;
      const image = (value.op === 'd' ? value.before : value.after) as { order_id: number };
      current.set(image.order_id, value.op !== 'd');
    }
    const live = [...current].filter(([, alive]) => alive).map(([id]) => BigInt(id as number));

    // Act
    const code = await ingest('orders-cdc.json', 'orders-cdc-1.json');

    // Assess
    expect(code, err.join('')).toBe(0);
    const rows = await rowsOf('sales.orders_current');
    expect(rows.map((r) => r.order_id).sort()).toEqual(live.sort());
  });

  it('orders-by-country.json: one topic feeds three tables by their `when`', async () => {
    // Prepare
    const orders = sampleRecords('orders-batch-1.json').filter((r) => r.value?.order_id !== undefined);
    const eu = orders.filter((r) => ['DE', 'FR'].includes(r.value!.country as string));
    const checkout = orders.filter(
      (r) => r.headers.source === 'checkout-service' && r.value!.status === 'PAID',
    );

    // Act
    const code = await ingest('orders-by-country.json', 'orders-batch-1.json');

    // Assess
    expect(code, err.join('')).toBe(0);
    expect((await rowsOf('sales.orders_eu')).length).toBe(eu.length);
    expect((await rowsOf('sales.orders_rest')).length).toBe(orders.length - eu.length);
    const paid = await rowsOf('sales.checkout_orders');
    expect(paid.length).toBe(checkout.length);
    expect(paid.every((r) => r.status === 'PAID' && !('lines' in r))).toBe(true);
  });

  it('orders-aggregate.json: revenue per country and day of the sample orders', async () => {
    // Prepare
    const countries = new Set(
      sampleRecords('orders-batch-1.json')
        .filter((r) => r.value?.order_id !== undefined && r.value.status !== 'CANCELLED')
        .map((r) => r.value!.country),
    );

    // Act
    const code = await ingest('orders-aggregate.json', 'orders-batch-1.json');

    // Assess
    expect(code, err.join('')).toBe(0);
    const rows = await rowsOf('sales.revenue_per_country_day');
    expect(new Set(rows.map((r) => r.country))).toEqual(countries);
  });
});
