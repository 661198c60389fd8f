/**
 * Puffin files against Iceberg Java's golden files (test/fixtures/puffin/, see its README), with the
 * values TestPuffinReader and TestPuffinWriter expect: read from bytes and through a FileIO's ranged
 * reads, and written byte for byte.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsupportedPuffinError } from '../../../../functions/core/data/puffin/puffin-errors.js';
import {
  type PuffinSource,
  readPuffinBlob,
  readPuffinFooter,
} from '../../../../functions/core/data/puffin/puffin-reader.js';
import { writePuffin } from '../../../../functions/core/data/puffin/puffin-writer.js';
import { LocalFileIO } from '../../../../functions/core/io/local-file-io.js';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/puffin');
const fixture = async (name: string) => new Uint8Array(await readFile(join(FIXTURES, name)));

const SECOND_BLOB = 'some blob \u0000 binary data 🤯 that is not very very very very very very long, is it?';
const utf8 = (text: string) => new TextEncoder().encode(text);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-puffin-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The fixture as bytes, and as a file read through LocalFileIO's ranged reads. */
async function sources(name: string): Promise<[string, PuffinSource][]> {
  const bytes = await fixture(name);
  const location = join(dir, name);
  await writeFile(location, bytes);
  return [
    ['bytes', bytes],
    ['FileIO', { io: new LocalFileIO(), location, size: bytes.byteLength }],
  ];
}

describe("Puffin against Iceberg Java's golden files", () => {
  it('reads empty-puffin-uncompressed.bin: no blobs, no properties, a 28-byte footer', async () => {
    for (const [how, source] of await sources('empty-puffin-uncompressed.bin')) {
      // Act
      const footer = await readPuffinFooter(source);

      // Assess
      expect(footer, how).toEqual({ metadata: { blobs: [] }, footerSize: 28 });
    }
  });

  it('reads sample-metric-data-uncompressed.bin: its two blobs, their bytes, created-by', async () => {
    for (const [how, source] of await sources('sample-metric-data-uncompressed.bin')) {
      // Act
      const { metadata } = await readPuffinFooter(source);
      const [first, second] = metadata.blobs;
      const data = await Promise.all(metadata.blobs.map((b) => readPuffinBlob(source, b.offset, b.length)));

      // Assess
      expect(metadata.properties, how).toEqual({ 'created-by': 'Test 1234' });
      expect(first, how).toEqual({
        type: 'some-blob',
        fields: [1],
        'snapshot-id': 2,
        'sequence-number': 1,
        offset: 4,
        length: 9,
      });
      expect(second, how).toMatchObject({
        type: 'some-other-blob',
        fields: [2],
        offset: first!.offset + first!.length,
      });
      expect(second!['compression-codec'], how).toBeUndefined();
      expect(data, how).toEqual([utf8('abcdefghi'), utf8(SECOND_BLOB)]);
    }
  });

  it('reads the footer of sample-metric-data-compressed-zstd.bin (314 bytes) and refuses its zstd blobs', async () => {
    for (const [how, source] of await sources('sample-metric-data-compressed-zstd.bin')) {
      // Act
      const footer = await readPuffinFooter(source);
      const blob = footer.metadata.blobs[0]!;

      // Assess
      expect(footer.footerSize, how).toBe(314);
      expect(footer.metadata.blobs.map((b) => [b.type, b['compression-codec']])).toEqual([
        ['some-blob', 'zstd'],
        ['some-other-blob', 'zstd'],
      ]);
      await expect(
        readPuffinBlob(source, blob.offset, blob.length, blob['compression-codec']),
      ).rejects.toThrow(UnsupportedPuffinError);
    }
  });

  it("writes Java's empty file and its sample metric data file byte for byte", async () => {
    // Act
    const empty = writePuffin([]);
    const sample = writePuffin(
      [
        { type: 'some-blob', fields: [1], 'snapshot-id': 2, 'sequence-number': 1, data: utf8('abcdefghi') },
        {
          type: 'some-other-blob',
          fields: [2],
          'snapshot-id': 2,
          'sequence-number': 1,
          data: utf8(SECOND_BLOB),
        },
      ],
      { 'created-by': 'Test 1234' },
    );

    // Assess
    expect(Buffer.from(empty.bytes).equals(await fixture('empty-puffin-uncompressed.bin'))).toBe(true);
    expect(empty.footerSize).toBe(28);
    expect(Buffer.from(sample.bytes).equals(await fixture('sample-metric-data-uncompressed.bin'))).toBe(true);
    expect(sample.metadata.blobs.map((b) => [b.offset, b.length])).toEqual([
      [4, 9],
      [13, 83],
    ]);
  });

  it('writes the file Java sizes at 122 bytes for one 4-byte blob (TestPuffinWriter.testFileSizeCalculation)', () => {
    const written = writePuffin([
      { type: 'blob', fields: [1], 'snapshot-id': 2, 'sequence-number': 1, data: utf8('blob') },
    ]);
    expect(written.bytes.byteLength).toBe(122);
  });
});
