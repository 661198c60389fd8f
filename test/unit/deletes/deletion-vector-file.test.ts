/**
 * Deletion vectors in Puffin files as the Iceberg v3 spec places them: the footer entry Java's
 * BaseDVFileWriter writes, the offsets a manifest entry needs, and each vector read back by that range
 * alone through a FileIO.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPuffinFooter } from '../../../functions/core/data/puffin/puffin-reader.js';
import { writePuffin } from '../../../functions/core/data/puffin/puffin-writer.js';
import { CorruptDeletionVectorError } from '../../../functions/core/deletes/deletes-errors.js';
import { DeletionVector } from '../../../functions/core/deletes/deletion-vector.js';
import {
  deletionVectorsInFooter,
  readDeletionVector,
  writeDeletionVectorFile,
} from '../../../functions/core/deletes/deletion-vector-file.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';

const vectorOf = (...positions: (number | bigint)[]) => {
  const vector = new DeletionVector();
  vector.addAll(positions);
  return vector;
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-dv-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('deletion vector Puffin files', () => {
  it("writes the footer entries Java's BaseDVFileWriter writes and the ranges a manifest entry needs", async () => {
    // Prepare
    const io = new LocalFileIO();
    const location = join(dir, 'dv.puffin');
    const a = vectorOf(1, 3, 5, 7, 9);
    const b = vectorOf(0, 2n ** 32n + 1n, 2n ** 40n);

    // Act
    const written = writeDeletionVectorFile([
      { referencedDataFile: 's3://bucket/t/data/a.parquet', vector: a },
      { referencedDataFile: 's3://bucket/t/data/b.parquet', vector: b },
    ]);
    await io.write(location, written.bytes);
    const source = { io, location, size: written.bytes.byteLength };
    const footer = await readPuffinFooter(source);
    const readBack = await Promise.all(
      written.vectors.map((v) =>
        readDeletionVector(source, v.contentOffset, v.contentSizeInBytes, v.cardinality),
      ),
    );

    // Assess
    expect(footer.metadata.properties).toEqual({ 'created-by': 'floe' });
    expect(footer.metadata.blobs[0]).toEqual({
      type: 'deletion-vector-v1',
      fields: [2147483645],
      'snapshot-id': -1,
      'sequence-number': -1,
      offset: 4,
      length: written.vectors[0]!.contentSizeInBytes,
      properties: { 'referenced-data-file': 's3://bucket/t/data/a.parquet', cardinality: '5' },
    });
    expect(deletionVectorsInFooter(footer)).toEqual(written.vectors);
    expect(written.vectors.map((v) => [v.referencedDataFile, v.cardinality])).toEqual([
      ['s3://bucket/t/data/a.parquet', 5],
      ['s3://bucket/t/data/b.parquet', 3],
    ]);
    expect(readBack.map((v) => [...v.positions()])).toEqual([[...a.positions()], [...b.positions()]]);
  });

  it('stores the blob exactly as Java serializes it (its golden small-alternating-values index)', () => {
    // Prepare
    const golden = readFileSync(
      join(import.meta.dirname, '../../fixtures/deletes/small-alternating-values-position-index.bin'),
    );

    // Act
    const written = writeDeletionVectorFile([{ referencedDataFile: 'f', vector: vectorOf(1, 3, 5, 7, 9) }]);
    const { contentOffset, contentSizeInBytes } = written.vectors[0]!;

    // Assess
    expect(
      Buffer.from(written.bytes.subarray(contentOffset, contentOffset + contentSizeInBytes)).equals(golden),
    ).toBe(true);
  });

  it('refuses two vectors for one data file, and an empty vector', () => {
    const one = { referencedDataFile: 'f', vector: vectorOf(1) };
    expect(() => writeDeletionVectorFile([one, { ...one, vector: vectorOf(2) }])).toThrow(ValidationError);
    expect(() => writeDeletionVectorFile([one, one])).toThrow(/two deletion vectors for f/);
    expect(() =>
      writeDeletionVectorFile([{ referencedDataFile: 'g', vector: new DeletionVector() }]),
    ).toThrow(/the deletion vector for g is empty/);
  });

  it('refuses a vector whose manifest record_count disagrees with it', async () => {
    const written = writeDeletionVectorFile([{ referencedDataFile: 'f', vector: vectorOf(1, 2) }]);
    const { contentOffset, contentSizeInBytes } = written.vectors[0]!;
    await expect(readDeletionVector(written.bytes, contentOffset, contentSizeInBytes, 3)).rejects.toThrow(
      CorruptDeletionVectorError,
    );
  });

  it('refuses DV footer entries without the properties the spec requires, or compressed', async () => {
    // Prepare: other writers' files, made with the plain Puffin writer
    const dv = (properties: Record<string, string>) => ({
      type: 'deletion-vector-v1',
      fields: [2147483645],
      'snapshot-id': -1,
      'sequence-number': -1,
      data: new Uint8Array(20),
      properties,
    });
    const footerOf = async (properties: Record<string, string>) =>
      readPuffinFooter(writePuffin([dv(properties)]).bytes);
    const compressed = await footerOf({ 'referenced-data-file': 'f', cardinality: '1' });
    compressed.metadata.blobs[0]!['compression-codec'] = 'zstd';
    const unreferenced = await footerOf({ cardinality: '1' });
    const negative = await footerOf({ 'referenced-data-file': 'f', cardinality: '-1' });
    const valid = await footerOf({ 'referenced-data-file': 'f', cardinality: '7' });

    // Act / Assess
    expect(() => deletionVectorsInFooter(compressed)).toThrow(/is zstd-compressed; DVs never are/);
    expect(() => deletionVectorsInFooter(unreferenced)).toThrow(/has no referenced-data-file property/);
    expect(() => deletionVectorsInFooter(negative)).toThrow(/has cardinality -1, not a count/);
    expect(deletionVectorsInFooter(valid)).toEqual([
      { referencedDataFile: 'f', contentOffset: 4, contentSizeInBytes: 20, cardinality: 7 },
    ]);
  });
});
