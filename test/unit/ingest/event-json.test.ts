/**
 * Events floe parses itself (`floe ingest` files, `redrive-failed` on-failure records) keep offsets
 * exact: 2^63−1 is an offset, 2^63 a dead letter with its digits as given, in the reason and the
 * original alike.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { parseFailureRecord } from '../../../functions/core/kafka/failure-record.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { parseEventJson } from '../../../functions/core/records/event-json.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';

const value = (id: number) => Buffer.from(JSON.stringify({ id })).toString('base64');
const eventText = (...offsets: string[]) =>
  `{"eventSource":"aws:kafka","records":{"t-0":[${offsets
    .map((o, i) => `{"topic":"t","partition":0,"offset":${o},"value":"${value(i)}"}`)
    .join(',')}]}}`;

describe('parseEventJson', () => {
  it('parses an event without long numbers as JSON.parse does', () => {
    const text = eventText('1', '2');
    expect(parseEventJson(text)).toEqual(JSON.parse(text));
  });

  it('reads 2^63-1 exactly and dead-letters 2^63 and 2^53+1.5 with their digits as given', () => {
    // Act
    const { records } = decodeEsmEvent(
      parseEventJson(eventText('9223372036854775807', '9223372036854775808', '9007199254740993.5')),
    );
    // Assess
    expect(records.map((r) => [r.offset, r.decodeError])).toEqual([
      [
        -1n,
        'record offset 9223372036854775808 is not a Kafka offset (an integer from 0 to 9223372036854775807)',
      ],
      [
        -1n,
        'record offset 9007199254740993.5 is not a Kafka offset (an integer from 0 to 9223372036854775807)',
      ],
      [9223372036854775807n, undefined],
    ]);
    expect(JSON.stringify(records[0].original)).toContain('"offset":9223372036854775808');
  });

  it("reads an on-failure record's payload text exactly", () => {
    // Prepare: an S3 on-failure record whose payload is the event as JSON text
    const document = parseEventJson(
      JSON.stringify({ requestContext: {}, KafkaBatchInfo: {}, payload: eventText('9223372036854775806') }),
    );
    // Act
    const failure = parseFailureRecord(document, 'f.json');
    // Assess
    expect(decodeEsmEvent(failure.event).records[0].offset).toBe(9223372036854775806n);
  });
});

describe('floe ingest of an event file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-event-json-'));
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('commits offset 2^63-1 as it is, and dead-letters 2^63 without claiming it', async () => {
    // Prepare
    await writeFile(join(dir, 'event.json'), eventText('9223372036854775807', '9223372036854775808'));
    await writeFile(
      join(dir, 'schema.json'),
      JSON.stringify({
        type: 'struct',
        'schema-id': 0,
        fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
      }),
    );
    // Act
    const code = await main([
      'ingest',
      join(dir, 'event.json'),
      '--warehouse',
      join(dir, 'wh'),
      '--table',
      'e.t',
      '--schema',
      join(dir, 'schema.json'),
    ]);
    // Assess
    expect(code).toBe(0);
    const catalog = new EmbeddedCatalog({ warehouse: join(dir, 'wh') });
    const table = await catalog.loadTable({ namespace: ['e'], name: 't' });
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((r) => (r._kafka as { offset: bigint }).offset)).toEqual([9223372036854775807n]);
    const committed = (t: typeof table) => readCommittedOffsets(t.metadata).get('t')?.get(0);
    expect(committed(table)).toEqual([[9223372036854775807n, 9223372036854775807n]]);
    const dlq = await catalog.loadTable({ namespace: ['e'], name: 't__dlq' });
    const [letter] = await readScanRows(dlq, await planScan(dlq));
    expect(letter).toMatchObject({ partition: 0, offset: -1n });
    expect(letter.error).toContain('record offset 9223372036854775808 is not a Kafka offset');
    expect(letter.original).toContain('"offset":9223372036854775808');
    expect(committed(dlq)).toBeUndefined();
  });
});
