/**
 * A file's page index is input floe did not write: pruning by it must never drop a row. An OffsetIndex
 * whose pages leave rows out (the first page not at row 0, first rows out of order or past the row
 * group) is not used, and the scan returns what the plain read returns.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileFooter } from '../../../functions/core/data/parquet/read/file-footer.js';
import { openDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { pruneRowSpans } from '../../../functions/core/scan/prune-row-spans.js';
import { readTaskRows } from '../../../functions/core/scan/read-task-rows.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { type PageLocationTuple, withOffsetIndex } from '../data/lying-page-index.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'note', required: false, type: 'string' },
  ],
};

const io = new LocalFileIO();
let root: string;
let bytes: Uint8Array;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-hostile-'));
  const rows = Array.from({ length: 40 }, (_, i) => ({ id: BigInt(i), note: i % 3 === 0 ? null : `n${i}` }));
  const [file] = await writeDataFiles(rows, {
    io,
    schema: SCHEMA,
    specId: 0,
    partition: {},
    nextLocation: (i) => path.join(root, `clean-${i}.parquet`),
    pageRowLimit: 5,
  });
  bytes = await io.read(file.file_path);
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const lies: [string, (pages: PageLocationTuple[]) => PageLocationTuple[]][] = [
  ['the first page not at row 0', (p) => p.map(([a, s, f], i) => [a, s, i === 0 ? 3 : f])],
  ['first rows out of order', (p) => p.map(([a, s, f], i) => [a, s, i === 1 ? 15 : f])],
  ['a page past the row group', (p) => p.map(([a, s, f], i) => [a, s, i === p.length - 1 ? 41 : f])],
];

describe('pruning by a page index that lies', () => {
  it.each(lies)('keeps every row (%s)', async (_, lie) => {
    // Prepare: chunk 0 is the filter column `id`.
    const lied = withOffsetIndex(bytes, 0, lie);
    const location = path.join(root, `lied-${lies.findIndex(([, l]) => l === lie)}.parquet`);
    await io.write(location, lied);
    const filter = bindExpression({ op: 'in', term: 'id', values: [1n, 7n, 12n, 39n] }, SCHEMA);

    // Act
    const spans = pruneRowSpans(lied, filter, readFileFooter(lied)) ?? [];
    const read = await readTaskRows(io, location, SCHEMA, filter, true);
    const opened = await openDataFile(io, location);
    const plain = await opened.read(SCHEMA).finally(() => opened.close());

    // Assess
    for (const row of [1, 7, 12, 39]) expect(spans.some((s) => s.from <= row && row < s.to)).toBe(true);
    expect(read.rows).toEqual([plain[1], plain[7], plain[12], plain[39]]);
  });
});
