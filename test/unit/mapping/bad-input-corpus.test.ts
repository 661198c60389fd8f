/**
 * A corpus of bad inputs (bad-input-cases.ts), each run through the REAL ingest path (`ingestEvent` on
 * an embedded catalog in a temp warehouse) inside a batch of good records: the good records commit,
 * the bad one lands in `<table>__dlq` with its stage and a reason saying what was wrong, nothing
 * crashes, nothing is lost (rows + dead letters = records), and a replay changes nothing. Events that
 * are not ESM events at all fail the whole batch with a ValidationError and write nothing.
 *
 * Cases that need the record mapping, schema evolution or the formats decoder wired into ingest-table
 * are in bad-input-corpus-mapping.test.ts (through the mapping seam, with it.todo for end to end).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row, TableIdentifier } from '../../../functions/core/spec/types.js';
import { tempWarehouse } from '../../support/tables.js';
import { type Bad, CASES, type EsmRecord, esmRecord, SCHEMA } from './bad-input-cases.js';

async function rowsOf(catalog: EmbeddedCatalog, id: TableIdentifier): Promise<Row[]> {
  if (!(await catalog.tableExists(id))) return [];
  const table = await catalog.loadTable(id);
  return readScanRows(table, await planScan(table));
}

describe('bad-input corpus through the real ingest path', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterAll(() => cleanup());

  it('has at least 30 kinds, each with its own reason', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(CASES.map((c) => c.kind)).size).toBe(CASES.length);
  });

  CASES.forEach((c, n) => {
    it(`${c.kind}: good records commit, the bad one is dead-lettered with the reason`, async () => {
      const topic = `corpus${n}`;
      const id: TableIdentifier = { namespace: ['corpus'], name: `t${n}` };
      const route: TableRoute = {
        table: id,
        topics: [topic],
        schema: SCHEMA,
        kafkaLineage: true,
        properties: {},
      };
      const bad = c.bad(topic);
      const event = {
        eventSource: 'aws:kafka',
        records: { [`${topic}-0`]: [esmRecord(topic, 0), esmRecord(topic, 1), bad, esmRecord(topic, 3)] },
      };

      const report = await ingestEvent({ catalog, routes: [route] }, structuredClone(event));

      const main = await rowsOf(catalog, id);
      const dlq = await rowsOf(catalog, { namespace: ['corpus'], name: `t${n}__dlq` });
      expect(main.map((r) => r.order_id).sort()).toEqual([100n, 101n, 103n]);
      expect(dlq).toHaveLength(1);
      expect(main.length + dlq.length).toBe(4);
      const letter = dlq[0];
      expect(letter.stage).toBe(c.stage);
      expect(letter.error).toMatch(c.error);
      expect(letter.target_table).toBe(`corpus.t${n}`);
      // A record with no valid partition is placed nowhere: it claims no offset (its values are in `original`).
      const placed = c.kind !== 'negative partition';
      expect([letter.partition, letter.offset]).toEqual(placed ? [0, 2n] : [-1, -1n]);
      // The raw record is kept: its bytes when it was a proper record, else the record as delivered.
      const decoded = decodeEsmEvent(structuredClone(event)).records.find(
        (r) => r.offset === 2n || r.decodeError,
      );
      if (decoded?.decodeError === undefined) {
        const kept = letter.value === null ? null : Buffer.from(letter.value as Uint8Array);
        const sent = decoded?.value === null || decoded === undefined ? null : Buffer.from(decoded.value);
        // Buffer.equals, not toEqual: a deep compare of a 3 MB value byte by byte takes half a minute.
        expect(kept === null || sent === null ? kept === sent : kept.equals(sent)).toBe(true);
      } else {
        expect(JSON.parse(letter.original as string)).toEqual(bad);
      }
      expect(report.tables[0]).toMatchObject({ rowsWritten: 3, deadLettered: 1, status: 'committed' });

      // Replaying the same event changes nothing (exactly once, for the dead letter too).
      await ingestEvent({ catalog, routes: [route] }, structuredClone(event));
      expect(await rowsOf(catalog, id)).toHaveLength(3);
      expect(await rowsOf(catalog, { namespace: ['corpus'], name: `t${n}__dlq` })).toHaveLength(1);
    });
  });

  it.each([
    ['null', null, /not an object/],
    ['an array', [], /not an object/],
    ['a string', 'event', /not an object/],
    ['an S3 event', { Records: [{ eventSource: 'aws:s3' }] }, /eventSource is undefined/],
    ['an SQS-like event', { eventSource: 'aws:sqs', records: {} }, /eventSource is "aws:sqs"/],
    [
      'records that are not an object',
      { eventSource: 'aws:kafka', records: [] },
      /event\.records must be an object/,
    ],
    [
      'a partition group that is not an array',
      { eventSource: 'SelfManagedKafka', records: { 'corpusX-0': {} } },
      /must be an array/,
    ],
  ])(
    'an event that is not an ESM event at all (%s) fails cleanly and writes nothing',
    async (_name, event, message) => {
      const id: TableIdentifier = { namespace: ['corpus'], name: 'not_esm' };
      const route: TableRoute = {
        table: id,
        topics: ['corpusX'],
        schema: SCHEMA,
        kafkaLineage: true,
        properties: {},
      };
      await expect(ingestEvent({ catalog, routes: [route] }, event)).rejects.toThrow(ValidationError);
      await expect(ingestEvent({ catalog, routes: [route] }, event)).rejects.toThrow(message);
      expect(await catalog.tableExists(id)).toBe(false);
    },
  );

  // A record whose offset cannot be read (offset missing, or not even an object) is decoded with
  // offset -1: it must still reach the DLQ, never be taken for an already-committed one.
  it.each([
    [
      'a record without an offset',
      (topic: string) => {
        const { offset: _drop, ...rest } = esmRecord(topic, 2);
        return rest;
      },
      /offset undefined is not a Kafka offset \(an integer from 0 to 9223372036854775807\)/,
    ],
    [
      'a record that is not an object',
      () => 'just a string' as unknown as EsmRecord,
      /record is not an object/,
    ],
  ] as [string, Bad, RegExp][])('%s is dead-lettered, not silently skipped', async (name, makeBad, error) => {
    const topic = `corpus_${name.replace(/\W+/g, '_')}`;
    const id: TableIdentifier = { namespace: ['corpus'], name: topic };
    const route: TableRoute = {
      table: id,
      topics: [topic],
      schema: SCHEMA,
      kafkaLineage: true,
      properties: {},
    };
    const event = {
      eventSource: 'aws:kafka',
      records: { [`${topic}-0`]: [esmRecord(topic, 0), makeBad(topic), esmRecord(topic, 1)] },
    };
    await ingestEvent({ catalog, routes: [route] }, event);
    const main = await rowsOf(catalog, id);
    const dlq = await rowsOf(catalog, { namespace: ['corpus'], name: `${topic}__dlq` });
    expect(main).toHaveLength(2);
    expect(dlq.map((r) => r.error)).toEqual([expect.stringMatching(error)]);
  });
});
