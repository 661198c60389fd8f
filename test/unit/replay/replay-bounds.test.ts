/**
 * `floe replay` offset bounds that select nothing, or name what the table does not hold, are refused
 * (exit 2, saying what the table holds) before Kafka is contacted: the broker given here does not exist.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { checkReplayBounds } from '../../../functions/core/replay/check-bounds.js';
import type { ReplayBounds } from '../../../functions/core/records/replay-records.js';
import { decodeOffsets } from '../../../functions/core/table/source-offsets.js';
import { tempWarehouse } from '../../support/tables.js';

const value = (id: number) => Buffer.from(JSON.stringify({ id })).toString('base64');
const records = (partition: number, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    topic: 't',
    partition,
    offset: from + i,
    value: value(partition * 1000 + from + i),
  }));

describe('checkReplayBounds', () => {
  const committed = decodeOffsets('{"t":{"0":"0-99,200-299","1":"10-19"},"u":{"1":"5-7"}}');
  const check = (bounds: ReplayBounds) => () => checkReplayBounds(bounds, committed);

  it('takes bounds inside what the table holds, on any of its topics', () => {
    expect(check({ fromOffsets: new Map([[0, 50n]]), toOffsets: new Map([[0, 300n]]) })).not.toThrow();
    expect(check({ fromOffsets: new Map([[1, 5n]]), toOffsets: new Map([[1, 20n]]) })).not.toThrow();
    expect(check({ fromOffsets: new Map([[0, 299n]]) })).not.toThrow();
    expect(check({ toOffsets: new Map([[0, 1n]]) })).not.toThrow();
    expect(check({ fromTimeMs: 0 })).not.toThrow();
  });

  it.each<[string, ReplayBounds, string]>([
    [
      'an end before its start',
      { fromOffsets: new Map([[0, 100n]]), toOffsets: new Map([[0, 50n]]) },
      '--to-offsets 0:50 is not after --from-offsets 0:100: partition 0 would replay nothing',
    ],
    [
      'an end at its start',
      { fromOffsets: new Map([[0, 60n]]), toOffsets: new Map([[0, 60n]]) },
      'is not after --from-offsets 0:60',
    ],
    [
      'a partition the table does not hold',
      { fromOffsets: new Map([[9, 10n]]) },
      '--from-offsets 9:10: the table holds no partition 9 (the table holds partitions 0, 1)',
    ],
    [
      'an end on a partition the table does not hold',
      { toOffsets: new Map([[2, 10n]]) },
      '--to-offsets 2:10: the table holds no partition 2',
    ],
    [
      'a start past the last offset',
      { fromOffsets: new Map([[1, 20n]]) },
      "--from-offsets 1:20 is past the table's last offset: the table holds t/1 offsets 10..19; u/1 offsets 5..7",
    ],
    [
      'an end at or before the first offset',
      { toOffsets: new Map([[1, 5n]]) },
      "--to-offsets 1:5 stops before the table's first offset",
    ],
    [
      'an end past one after the last offset',
      { toOffsets: new Map([[0, 301n]]) },
      "--to-offsets 0:301 is past the table's last offset (0:300 replays to the end): the table holds t/0 offsets 0..99,200..299",
    ],
  ])('refuses %s, saying what the table holds', (_, bounds, message) => {
    expect(check(bounds)).toThrow(ValidationError);
    expect(check(bounds)).toThrow(message);
  });

  it('refuses any offset bound on a table that holds no offsets', () => {
    expect(() => checkReplayBounds({ fromOffsets: new Map([[0, 0n]]) }, new Map())).toThrow(
      '--from-offsets 0:0: the table holds no partition 0 (the table holds no committed offsets)',
    );
  });
});

describe('floe replay with bounds that make no sense', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    let catalog: Awaited<ReturnType<typeof tempWarehouse>>['catalog'];
    ({ dir, catalog, cleanup } = await tempWarehouse());
    await ingestEvent(
      {
        catalog,
        routes: [
          {
            table: { namespace: ['r'], name: 'orders' },
            topics: ['t'],
            schema: {
              type: 'struct',
              'schema-id': 0,
              fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
            },
            kafkaLineage: true,
            properties: {},
          },
        ],
      },
      { eventSource: 'aws:kafka', records: { 't-0': records(0, 0, 99), 't-1': records(1, 0, 49) } },
    );
  });
  afterAll(() => cleanup());
  afterEach(() => vi.restoreAllMocks());

  const replay = async (...bounds: string[]) => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    // A broker nobody listens on: a run that got past the checks would fail connecting (exit 1)
    const code = await main([
      'replay',
      '--warehouse',
      dir,
      '--table',
      'r.orders',
      '--bootstrap-servers',
      '127.0.0.1:1',
      '--to-topic',
      'out',
      ...bounds,
    ]);
    return {
      code,
      stderr: stderr.mock.calls.map((c) => String(c[0])).join(''),
      stdout: stdout.mock.calls.length,
    };
  };

  it.each([
    [
      ['--from-offsets', '0:100', '--to-offsets', '0:50'],
      /--to-offsets 0:50 is not after --from-offsets 0:100/,
    ],
    [['--from-offsets', '9:10'], /the table holds no partition 9 \(the table holds partitions 0, 1\)/],
    [
      ['--from-offsets', '1:50'],
      /--from-offsets 1:50 is past the table's last offset: the table holds t\/1 offsets 0\.\.49/,
    ],
    [
      ['--to-offsets', '0:5000'],
      /--to-offsets 0:5000 is past the table's last offset \(0:100 replays to the end\)/,
    ],
  ])('%j exits 2 before anything is produced', async (bounds, message) => {
    // Act
    const { code, stderr, stdout } = await replay(...bounds);
    // Assess
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe(0);
  });
});
