import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { Row } from '../../../functions/core/spec/types.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

const schema = schemaOf([
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'label', required: false, type: 'string' },
  { id: 3, name: 'score', required: false, type: 'double' },
]);

function makeRows(n: number): Row[] {
  let seed = 3;
  const rand = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed;
  };
  return Array.from({ length: n }, (_, k) => ({
    id: BigInt(k),
    label: `label-${rand() % 100_000}-${rand().toString(36)}`,
    score: (rand() % 1_000_000) / 7,
  }));
}

describe('writeDataFiles: rolling and codecs', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
  });

  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });

  it('rolls to several files at a small target, none above it, keeping every row in order', async () => {
    // Prepare
    const rows = makeRows(20_000);
    const target = 64 * 1024;
    const indexes: number[] = [];

    // Act
    const files = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      targetFileSizeBytes: target,
      nextLocation: (k) => {
        indexes.push(k);
        return wh.locations('roll')(k);
      },
    });

    // Assess
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(indexes).toEqual(files.map((_, k) => k));
    expect(files.reduce((sum, f) => sum + f.record_count, 0n)).toBe(20_000n);
    for (const f of files) expect(Number(f.file_size_in_bytes)).toBeLessThanOrEqual(target);
    // The probe is not left behind as a small file: all but the last file are reasonably full.
    for (const f of files.slice(0, -1)) expect(Number(f.file_size_in_bytes)).toBeGreaterThan(target / 2);
    const ids: bigint[] = [];
    for (const f of files) {
      const read = await duck.rowsJS(`SELECT id FROM read_parquet(${sqlString(f.file_path)})`);
      expect(BigInt(read.length)).toBe(f.record_count);
      ids.push(...read.map((r) => r.id as bigint));
    }
    expect(ids).toEqual(rows.map((r) => r.id));
  });

  it('re-plans past the first probe instead of leaving it as a small file', async () => {
    // Prepare: more rows than one probe (65,536), all of which fit the default 512 MiB target.
    const rows = makeRows(100_000);

    // Act
    const files = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('probe'),
    });

    // Assess
    expect(files).toHaveLength(1);
    expect(files[0].record_count).toBe(100_000n);
    const [count] = await duck.rowsJS(
      `SELECT count(*) AS n FROM read_parquet(${sqlString(files[0].file_path)})`,
    );
    expect(count.n).toBe(100_000n);
  });

  it('writes one file when everything fits the target', async () => {
    // Act
    const files = await writeDataFiles(makeRows(1000), {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('single'),
    });

    // Assess
    expect(files).toHaveLength(1);
    expect(files[0].record_count).toBe(1000n);
  });

  it.each([
    ['zstd', 'ZSTD'],
    ['snappy', 'SNAPPY'],
    ['gzip', 'GZIP'],
    ['uncompressed', 'UNCOMPRESSED'],
  ] as const)('compresses with %s', async (codec, expected) => {
    // Prepare
    const rows = makeRows(500);

    // Act
    const [file] = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      codec,
      nextLocation: wh.locations(`codec-${codec}`),
    });
    const codecs = await duck.rowsJS(
      `SELECT DISTINCT compression FROM parquet_metadata(${sqlString(file.file_path)})`,
    );
    const [sum] = await duck.rowsJS(
      `SELECT sum(id) AS total FROM read_parquet(${sqlString(file.file_path)})`,
    );

    // Assess
    expect(codecs).toEqual([{ compression: expected }]);
    expect(sum.total).toBe(BigInt((499 * 500) / 2));
  });
});
