/**
 * Puffin files that are damaged or built to mislead, assembled here byte by byte (not with the writer
 * under test): each is refused with a CorruptPuffinError or UnsupportedPuffinError naming the problem,
 * before any range it names is read. And a file whose footer is past the reader's first tail read,
 * read through a FileIO in two requests.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CorruptPuffinError,
  UnsupportedPuffinError,
} from '../../../../functions/core/data/puffin/puffin-errors.js';
import { readPuffinBlob, readPuffinFooter } from '../../../../functions/core/data/puffin/puffin-reader.js';
import { writePuffin } from '../../../../functions/core/data/puffin/puffin-writer.js';
import { LakeError } from '../../../../functions/core/errors.js';
import { LocalFileIO } from '../../../../functions/core/io/local-file-io.js';

const PFA1 = [0x50, 0x46, 0x41, 0x31];

interface Parts {
  blobs?: number[];
  payload?: string | Uint8Array;
  payloadSize?: number;
  flags?: number[];
  head?: number[];
  tail?: number[];
}

/** Magic, blob bytes, magic, payload, payload size (int32 LE), flags, magic — each part replaceable. */
function puffin({
  blobs = [],
  payload = '{"blobs":[]}',
  payloadSize,
  flags = [0, 0, 0, 0],
  head = PFA1,
  tail = PFA1,
}: Parts) {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const size = new Uint8Array(4);
  new DataView(size.buffer).setInt32(0, payloadSize ?? body.byteLength, true);
  return new Uint8Array([...head, ...blobs, ...PFA1, ...body, ...size, ...flags, ...tail]);
}

/** A footer with one blob entry; `blob` overrides its members. */
const oneBlob = (blob: Record<string, unknown>) =>
  JSON.stringify({
    blobs: [
      { type: 't', fields: [1], 'snapshot-id': -1, 'sequence-number': -1, offset: 4, length: 3, ...blob },
    ],
  });

describe('hostile Puffin files', () => {
  const cases: [string, () => Uint8Array, typeof CorruptPuffinError, RegExp][] = [
    [
      'a file shorter than an empty Puffin file',
      () => puffin({}).subarray(0, 19),
      CorruptPuffinError,
      /19 bytes, shorter than the 20/,
    ],
    [
      'a truncated file (no trailing magic)',
      () => puffin({}).subarray(0, 31),
      CorruptPuffinError,
      /no PFA1 magic at its end/,
    ],
    [
      'a wrong leading magic',
      () => puffin({ head: [0x50, 0x41, 0x52, 0x31] }),
      CorruptPuffinError,
      /does not start with the PFA1 magic/,
    ],
    [
      'a wrong trailing magic',
      () => puffin({ tail: [0x50, 0x46, 0x41, 0x32] }),
      CorruptPuffinError,
      /no PFA1 magic at its end/,
    ],
    [
      'a negative footer payload size',
      () => puffin({ payloadSize: -5 }),
      CorruptPuffinError,
      /payload size -5 does not fit a file of 32 bytes/,
    ],
    [
      'a footer payload size of 2 GiB',
      () => puffin({ payloadSize: 0x7fffffff }),
      CorruptPuffinError,
      /payload size 2147483647 does not fit/,
    ],
    [
      'a footer payload size off by one',
      () => puffin({ blobs: [1, 2, 3], payloadSize: 13 }),
      CorruptPuffinError,
      /no PFA1 magic where the footer starts/,
    ],
    [
      'an LZ4-compressed footer',
      () => puffin({ flags: [1, 0, 0, 0] }),
      UnsupportedPuffinError,
      /LZ4-compressed/,
    ],
    [
      'a reserved flag bit',
      () => puffin({ flags: [0, 0, 4, 0] }),
      UnsupportedPuffinError,
      /reserved footer flag bits 100 set in byte 2/,
    ],
    [
      'a footer that is not UTF-8',
      () => puffin({ payload: new Uint8Array([0x7b, 0xff, 0x7d]) }),
      CorruptPuffinError,
      /not UTF-8 JSON/,
    ],
    [
      'a footer that is not JSON',
      () => puffin({ payload: '{"blobs":[' }),
      CorruptPuffinError,
      /not UTF-8 JSON/,
    ],
    [
      'a footer without blobs',
      () => puffin({ payload: '{"properties":{}}' }),
      CorruptPuffinError,
      /blobs: is required/,
    ],
    [
      'blobs that are not a list',
      () => puffin({ payload: '{"blobs":{}}' }),
      CorruptPuffinError,
      /blobs: expected an array/,
    ],
    [
      'a blob past the footer',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ length: 4 }) }),
      CorruptPuffinError,
      /blobs\[0\]: blob at offset 4 of length 4 lies outside the blob area \[4, 7\)/,
    ],
    [
      'a blob over the leading magic',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ offset: 0 }) }),
      CorruptPuffinError,
      /lies outside the blob area/,
    ],
    [
      'a negative blob length',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ length: -1 }) }),
      CorruptPuffinError,
      /blobs\[0\]\.length: expected a byte count ≥ 0/,
    ],
    [
      'a huge blob offset',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ offset: 1e300 }) }),
      CorruptPuffinError,
      /blobs\[0\]\.offset: expected a byte count/,
    ],
    [
      'a field id that is no int',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ fields: [2 ** 31] }) }),
      CorruptPuffinError,
      /blobs\[0\]\.fields\[0\]: expected a 32-bit field id/,
    ],
    [
      'a snapshot id that is a string',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ 'snapshot-id': '1' }) }),
      CorruptPuffinError,
      /blobs\[0\]\.snapshot-id: expected a 64-bit integer/,
    ],
    [
      'a missing blob type',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ type: undefined }) }),
      CorruptPuffinError,
      /blobs\[0\]\.type: is required/,
    ],
    [
      'a property that is not a string',
      () => puffin({ blobs: [1, 2, 3], payload: oneBlob({ properties: { cardinality: 3 } }) }),
      CorruptPuffinError,
      /blobs\[0\]\.properties\.cardinality: expected a string/,
    ],
  ];

  it.each(cases)('refuses %s', async (_name, make, type, message) => {
    // Prepare
    const file = make();

    // Act
    const read = readPuffinFooter(file);

    // Assess
    await expect(read).rejects.toThrow(type);
    await expect(readPuffinFooter(file)).rejects.toThrow(message);
  });

  it('reads the well-formed file the cases above alter', async () => {
    const footer = await readPuffinFooter(
      puffin({ blobs: [1, 2, 3], payload: oneBlob({ properties: { a: 'b' } }) }),
    );
    expect(footer.metadata.blobs).toEqual([
      {
        type: 't',
        fields: [1],
        'snapshot-id': -1,
        'sequence-number': -1,
        offset: 4,
        length: 3,
        properties: { a: 'b' },
      },
    ]);
  });

  it('reads a snapshot id past 2^53 exactly', async () => {
    const payload = oneBlob({}).replace('"snapshot-id":-1', '"snapshot-id":9007199254740993');
    const footer = await readPuffinFooter(puffin({ blobs: [1, 2, 3], payload }));
    expect(footer.metadata.blobs[0]!['snapshot-id']).toBe(9007199254740993n);
  });

  it('refuses blob ranges outside the blob area, before reading them', async () => {
    // Prepare: blob bytes at [4, 7), the footer from 7 on; without reading the footer (a manifest's
    // offsets are read directly) the area ends where the smallest footer would start, at 35 − 16 = 19
    const file = puffin({ blobs: [1, 2, 3] });

    // Act / Assess
    expect(await readPuffinBlob(file, 4, 3)).toEqual(new Uint8Array([1, 2, 3]));
    for (const [offset, length] of [
      [0, 3],
      [4, 16],
      [4, -1],
      [5, 2 ** 53],
      [Number.NaN, 1],
    ] as const) {
      await expect(readPuffinBlob(file, offset, length), `${offset}, ${length}`).rejects.toThrow(
        /lies outside the blob area/,
      );
    }
  });
});

describe('Puffin through a FileIO', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-puffin-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a footer larger than the first tail read, in a file larger than it', async () => {
    // Prepare: 2000 blobs with long properties make a footer of several hundred KiB
    const blobs = Array.from({ length: 2000 }, (_, i) => ({
      type: 'deletion-vector-v1',
      fields: [2147483645],
      'snapshot-id': -1,
      'sequence-number': -1,
      data: new Uint8Array(100).fill(i % 256),
      properties: { 'referenced-data-file': `s3://bucket/table/data/${'x'.repeat(200)}-${i}.parquet` },
    }));
    const written = writePuffin(blobs);
    const location = join(dir, 'large.puffin');
    await writeFile(location, written.bytes);
    const source = { io: new LocalFileIO(), location, size: written.bytes.byteLength };

    // Act
    const footer = await readPuffinFooter(source);
    const last = footer.metadata.blobs[1999]!;
    const data = await readPuffinBlob(source, last.offset, last.length);

    // Assess
    expect(written.footerSize).toBeGreaterThan(64 * 1024);
    expect(footer.footerSize).toBe(written.footerSize);
    expect(footer.metadata).toEqual(written.metadata);
    expect(data).toEqual(new Uint8Array(100).fill(1999 % 256));
  });

  it('refuses a file shorter than the size it was given (a torn upload)', async () => {
    // Prepare
    const bytes = writePuffin([
      { type: 't', fields: [], 'snapshot-id': 1, 'sequence-number': 1, data: new Uint8Array(9) },
    ]).bytes;
    const location = join(dir, 'torn.puffin');
    await writeFile(location, bytes.subarray(0, bytes.byteLength - 5));
    const source = { io: new LocalFileIO(), location, size: bytes.byteLength };

    // Act / Assess
    await expect(readPuffinFooter(source)).rejects.toThrow(LakeError);
    await expect(readPuffinBlob(source, 4, 9)).resolves.toHaveLength(9);
    await expect(readPuffinBlob(source, 4, bytes.byteLength)).rejects.toThrow(CorruptPuffinError);
  });
});
