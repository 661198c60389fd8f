/**
 * A selective scan of a large data file on S3 reads it by Range GETs (moto answers them as S3 does):
 * a point query fetches a small part of the file and returns the rows of the whole-file route; a size
 * hint that lies sends it to the whole-file route.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { RANGED_MIN_BYTES, readTaskRows } from '../../../functions/core/scan/read-task-rows.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { createBucket, describeWithMoto, resetMoto, s3ClientForTests, uniqueBucketName } from '../moto.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'note', required: false, type: 'string' },
    { id: 3, name: 'qty', required: false, type: 'int' },
  ],
};

/** Counts the FileIO calls a read makes and the bytes they return. */
function counting(inner: FileIO) {
  const calls: string[] = [];
  let bytes = 0;
  const io: FileIO = {
    read: async (l) => {
      calls.push('read');
      const out = await inner.read(l);
      bytes += out.byteLength;
      return out;
    },
    readRange: async (l, o, n) => {
      calls.push('readRange');
      const out = await inner.readRange(l, o, n);
      bytes += out.byteLength;
      return out;
    },
    stat: (l) => {
      calls.push('stat');
      return inner.stat(l);
    },
    write: (l, d) => inner.write(l, d),
    writeIfAbsent: (l, d) => inner.writeIfAbsent(l, d),
    exists: (l) => inner.exists(l),
    delete: (l) => inner.delete(l),
    list: (p) => inner.list(p),
  };
  return { io, calls, bytes: () => bytes };
}

describeWithMoto('readTaskRows by S3 Range GETs against moto', () => {
  let client: S3Client;
  let io: S3FileIO;
  let location: string;
  let size: number;
  let rows: Row[];

  beforeAll(async () => {
    await resetMoto();
    client = s3ClientForTests();
    const bucket = await createBucket(uniqueBucketName(), client);
    io = new S3FileIO({ client });
    rows = Array.from({ length: 80_000 }, (_, i) => ({
      id: BigInt(i),
      note: `note-${(i * 2654435761) % 1_000_003}-${(((i + 7) * 1103515245 + 12345) % 2_147_483_648).toString(36)}${(((i + 3) * 69069 + 1) % 2_147_483_648).toString(36)}`,
      qty: i % 13 === 0 ? null : i % 1000,
    }));
    const [file] = await writeDataFiles(rows, {
      io,
      schema: SCHEMA,
      specId: 0,
      partition: {},
      nextLocation: (n) => `s3://${bucket}/t/data/big-${n}.parquet`,
      pageRowLimit: 1000,
      rowGroupSizeBytes: 512 * 1024,
    });
    location = file.file_path;
    size = Number(file.file_size_in_bytes);
  });
  afterAll(() => client?.destroy());

  it('fetches a small part of the file for a point query, with the rows of the whole-file route', async () => {
    // Prepare
    expect(size).toBeGreaterThan(RANGED_MIN_BYTES);
    const filter = bindExpression({ op: 'eq', term: 'id', value: 61_234n }, SCHEMA);
    const counted = counting(io);

    // Act
    const ranged = await readTaskRows(counted.io, location, SCHEMA, filter, true, size);
    const whole = await readTaskRows(io, location, SCHEMA, filter, true);

    // Assess
    expect(ranged).toEqual(whole);
    expect(ranged.rows).toEqual([rows[61_234]]);
    expect(counted.calls).not.toContain('read');
    expect(counted.calls.filter((c) => c === 'readRange').length).toBeGreaterThanOrEqual(2); // tail, pages
    expect(counted.bytes()).toBeLessThan(size / 3);
  });

  it('reads the file whole when the size hint is wrong, with the same rows', async () => {
    const filter = bindExpression({ op: 'eq', term: 'id', value: 7n }, SCHEMA);
    for (const hint of [size + 1, size - 1]) {
      const counted = counting(io);
      const ranged = await readTaskRows(counted.io, location, SCHEMA, filter, true, hint);
      expect(ranged.rows).toEqual([rows[7]]);
      expect(counted.calls.filter((c) => c === 'stat')).toHaveLength(1);
      expect(counted.calls.filter((c) => c === 'read')).toHaveLength(1);
    }
  });
});
