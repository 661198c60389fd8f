/**
 * `npm start`: the whole table path on the embedded default, no AWS account needed. Ingests the
 * sample events (running it again shows the replay being skipped), then prints the table and a
 * pruned scan; then a Debezium change stream of the same shop becomes a second table holding the
 * orders' current state (updates applied, cancellations deleted); and the same sample orders feed an
 * aggregate route (events/orders-aggregate-routes.json): revenue per country and day, windows closed
 * by the watermark, late records dead-lettered.
 */
import { fileURLToPath } from 'node:url';
import type { ParsedOptions } from '../options.js';
import { runIngest } from './ingest.js';
import { runInspect } from './inspect.js';
import { runScan } from './scan.js';

const EVENTS = fileURLToPath(new URL('../../../events/', import.meta.url));

export async function runDemo(values: ParsedOptions): Promise<number> {
  const warehouse = values.warehouse ?? 'warehouse';
  const say = (text: string) => process.stdout.write(`\n=== ${text}\n`);
  say(
    `ingest the sample orders (3 Kafka partitions, 2 batches) into ${warehouse}, table sales.orders, partitioned by day(order_ts)`,
  );
  await runIngest(
    {
      warehouse,
      table: 'sales.orders',
      schema: `${EVENTS}orders.schema.json`,
      'partition-by': 'day(order_ts)',
    },
    [`${EVENTS}orders-batch-1.json`, `${EVENTS}orders-batch-2.json`],
  );
  say("ingest AWS's sample MSK event (its value is plain text, not JSON: it goes to the dead-letter table)");
  await runIngest({ warehouse, table: 'demo.mytopic', schema: `${EVENTS}mytopic.schema.json` }, [
    `${EVENTS}aws-docs-msk-event.json`,
  ]);
  say('the table');
  await runInspect({ warehouse, table: 'sales.orders' });
  say("a pruned scan: order_ts >= '2026-11-22T00:00:00Z' and country = 'DE'");
  await runScan({
    warehouse,
    table: 'sales.orders',
    where: "order_ts >= '2026-11-22T00:00:00Z' and country = 'DE'",
    limit: '10',
  });
  say('dead letters of sales.orders (kept with their raw bytes and the reason)');
  await runScan({ warehouse, table: 'sales.orders__dlq', limit: '10' });
  say(
    'CDC: Debezium change events of the orders database table (snapshot, inserts, price updates, cancellations) into sales.orders_current, keyed by order_id',
  );
  await runIngest(
    {
      warehouse,
      table: 'sales.orders_current',
      schema: `${EVENTS}orders-cdc-schema.json`,
      'partition-by': 'bucket(4, order_id)',
      mode: 'debezium',
      identifier: 'order_id',
    },
    [`${EVENTS}orders-cdc-1.json`, `${EVENTS}orders-cdc-2.json`],
  );
  say('the current state of the orders (equality deletes applied at read time)');
  await runScan({ warehouse, table: 'sales.orders_current' });
  say(
    "SQL: revenue per country and day of the same orders, from events/orders-aggregate-routes.json (TUMBLE 1 DAY, 1 h lateness); late records go to the table's DLQ",
  );
  await runIngest({ warehouse, routes: `${EVENTS}orders-aggregate-routes.json` }, [
    `${EVENTS}orders-batch-1.json`,
    `${EVENTS}orders-batch-2.json`,
  ]);
  await runScan({
    warehouse,
    table: 'sales.revenue_per_country_day',
    where: "country in ('DE', 'JP')",
    limit: '6',
  });
  process.stdout.write(
    '\nRun `npm start` again: every batch is recognised as already committed, nothing is duplicated.\n',
  );
  return 0;
}
