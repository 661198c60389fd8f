/**
 * Random ESM events — map keys (topics holding '-', keys naming no partition), partitions and offsets
 * given as numbers and strings, negatives, fractions, 2^53+1, 2^63−1, 2^63, keys and records that
 * disagree — written as JSON text and ingested as `floe ingest` reads a file (parseEventJson: offsets
 * exact) or as the Lambda runtime hands an event over (JSON.parse: past 2^53 unreadable). Every record
 * ends in the table or the DLQ, a valid one in the table (its first copy), and no committed range of
 * either table has an end that no valid record holds.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseEventJson } from '../../../functions/core/records/event-json.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row, TableIdentifier } from '../../../functions/core/spec/types.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { tempWarehouse } from '../../support/tables.js';

const MAX_OFFSET = 2n ** 63n - 1n;
const MAX_PARTITION = 2 ** 31 - 1;

/** JSON text of a partition field (undefined: left out). */
const partitionText = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom('0', '1', '2', '3') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('null', '-1', '-0', '1.0', '1.5', '2147483647', '2147483648', '"1"', '1e300'),
  },
);

/** JSON text of an offset field. */
const offsetText = fc.oneof(
  { weight: 6, arbitrary: fc.nat(6).map(String) },
  fc.constantFrom(
    undefined,
    'null',
    '-1',
    '-0',
    '2.0',
    '1.5',
    '1e3',
    '9007199254740991',
    '9007199254740993',
    '9223372036854775807',
    '9223372036854775808',
    '-9223372036854775809',
    '"4"',
    '"9223372036854775807"',
    '"9223372036854775808"',
    '"-3"',
    '"1.5"',
  ),
);

const topicText = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  fc.constantFrom('"t"', '"t-"', '"x"'),
);

const KEYS = ['t-0', 't-1', 't-2', 't--1', 't--2', 't-', 't', 'x-3', 't-2147483648', 't-1x'];

interface Generated {
  key: string;
  topic?: string;
  partition?: string;
  offset?: string;
}

const eventArb = fc.record({
  groups: fc.uniqueArray(
    fc.tuple(
      fc.oneof({ weight: 3, arbitrary: fc.constantFrom('t-0', 't-1', 't--1') }, fc.constantFrom(...KEYS)),
      fc.array(fc.record({ topic: topicText, partition: partitionText, offset: offsetText }), {
        minLength: 1,
        maxLength: 5,
      }),
    ),
    { minLength: 1, maxLength: 4, selector: ([key]) => key },
  ),
  exact: fc.boolean(),
});

/** The record's place when every field is valid and spells its key `topic-partition`; else undefined. */
function placeOf(
  g: Generated,
  exact: boolean,
): { topic: string; partition: number; offset: bigint } | undefined {
  const parsed = g.partition === undefined ? null : (JSON.parse(g.partition) as unknown);
  const given = parsed === null ? undefined : typeof parsed === 'number' ? parsed + 0 : parsed; // -0 is partition 0
  if (
    given !== undefined &&
    !(Number.isInteger(given) && (given as number) >= 0 && (given as number) <= MAX_PARTITION)
  )
    return undefined;
  const topic = g.topic === undefined ? undefined : (JSON.parse(g.topic) as string);
  const partitionIn = (digits: string) =>
    /^\d+$/.test(digits) && Number(digits) <= MAX_PARTITION ? Number(digits) : undefined;
  let place: { topic: string; partition: number } | undefined;
  if (topic !== undefined && given !== undefined) {
    if (g.key === `${topic}-${given}`) place = { topic, partition: given as number };
  } else if (topic !== undefined) {
    const partition = g.key.startsWith(`${topic}-`) ? partitionIn(g.key.slice(topic.length + 1)) : undefined;
    if (partition !== undefined) place = { topic, partition };
  } else if (given !== undefined) {
    const prefix = g.key.slice(0, -`-${given}`.length);
    if (g.key === `${prefix}-${given}`) place = { topic: prefix, partition: given as number };
  } else {
    // Neither given: the key's last '-' splits it (a topic may hold '-', a partition never does)
    const dash = g.key.lastIndexOf('-');
    const partition = dash >= 0 ? partitionIn(g.key.slice(dash + 1)) : undefined;
    if (partition !== undefined) place = { topic: g.key.slice(0, dash), partition };
  }
  const offset = offsetOf(g.offset, exact);
  return place === undefined || offset === undefined ? undefined : { ...place, offset };
}

function offsetOf(text: string | undefined, exact: boolean): bigint | undefined {
  if (text === undefined) return undefined;
  const value: unknown = JSON.parse(text);
  if (typeof value === 'string')
    return /^\d+$/.test(value) && BigInt(value) <= MAX_OFFSET ? BigInt(value) : undefined;
  if (typeof value !== 'number') return undefined;
  if (Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return exact && /^\d+$/.test(text) && BigInt(text) <= MAX_OFFSET ? BigInt(text) : undefined;
}

function recordText(g: Generated, id: number): string {
  const fields = [
    g.topic === undefined ? undefined : `"topic":${g.topic}`,
    g.partition === undefined ? undefined : `"partition":${g.partition}`,
    g.offset === undefined ? undefined : `"offset":${g.offset}`,
    `"value":"${Buffer.from(JSON.stringify({ id })).toString('base64')}"`,
  ];
  return `{${fields.filter((f) => f !== undefined).join(',')}}`;
}

const idOf = (bytes: unknown) =>
  (JSON.parse(Buffer.from(bytes as Uint8Array).toString()) as { id: number }).id;

describe('partitions and offsets of random events', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterAll(() => cleanup());

  it('put every record in the table or the DLQ, and claim no range no valid record covers', async () => {
    let run = 0;
    let valid = 0;
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(eventArb, async ({ groups, exact }) => {
        // Prepare: the event as text, each record with an id of its own in its value
        run += 1;
        const table: TableIdentifier = { namespace: ['placement'], name: `t${run}` };
        const dlq: TableIdentifier = { namespace: ['placement'], name: `t${run}__dlq` };
        const route: TableRoute = {
          table,
          topics: ['t', 't-', 'x'],
          schema: {
            type: 'struct',
            'schema-id': 0,
            fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
          },
          kafkaLineage: true,
          properties: {},
        };
        const all: { id: number; place: ReturnType<typeof placeOf> }[] = [];
        const text = groups
          .map(([key, list]) => {
            const records = list.map((r) => {
              const id = all.length;
              all.push({ id, place: placeOf({ key, ...r }, exact) });
              return recordText({ key, ...r }, id);
            });
            return `${JSON.stringify(key)}:[${records.join(',')}]`;
          })
          .join(',');
        const eventText = `{"eventSource":"aws:kafka","records":{${text}}}`;
        const event = exact ? parseEventJson(eventText) : JSON.parse(eventText);

        // Act
        await ingestEvent({ catalog, routes: [route] }, event);

        // Assess: every record once, in the table or the DLQ; a valid one's first copy in the table
        const rows = async (id: TableIdentifier): Promise<Row[]> =>
          (await catalog.tableExists(id))
            ? readScanRows(await catalog.loadTable(id), await planScan(await catalog.loadTable(id)))
            : [];
        const main = await rows(table);
        const letters = await rows(dlq);
        const landed = new Map<number, string>();
        for (const r of main) landed.set(Number(r.id), 'table');
        for (const r of letters) {
          const id = idOf(r.value ?? Buffer.from(JSON.parse(r.original as string).value, 'base64'));
          expect(landed.has(id)).toBe(false);
          landed.set(id, r.stage === 'duplicate' ? 'duplicate' : 'dlq');
        }
        expect([...landed.keys()].sort((a, b) => a - b)).toEqual(all.map((r) => r.id));
        const firsts = new Set<string>();
        for (const { id, place } of all) {
          if (place === undefined) {
            invalid += 1;
            expect(landed.get(id), `record ${id}`).toBe('dlq');
            continue;
          }
          valid += 1;
          const at = `${place.topic}/${place.partition}@${place.offset}`;
          expect(landed.get(id), `record ${id} at ${at}`).toBe(firsts.has(at) ? 'duplicate' : 'table');
          firsts.add(at);
          const row = main.find((r) => Number(r.id) === id);
          if (row) expect(row._kafka).toMatchObject(place);
        }
        // …and every committed range starts and ends at an offset a valid record holds
        const held = new Set(
          all.flatMap(({ place }) => (place ? [`${place.topic}/${place.partition}@${place.offset}`] : [])),
        );
        for (const id of [table, dlq]) {
          if (!(await catalog.tableExists(id))) continue;
          for (const [topic, parts] of readCommittedOffsets((await catalog.loadTable(id)).metadata)) {
            for (const [partition, ranges] of parts) {
              for (const [first, last] of ranges) {
                expect(held.has(`${topic}/${partition}@${first}`), `${topic}/${partition}@${first}`).toBe(
                  true,
                );
                expect(held.has(`${topic}/${partition}@${last}`), `${topic}/${partition}@${last}`).toBe(true);
              }
            }
          }
        }
      }),
      { seed: 29, numRuns: 40 },
    );
    expect(valid).toBeGreaterThan(60);
    expect(invalid).toBeGreaterThan(60);
  });
});
