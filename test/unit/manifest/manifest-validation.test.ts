import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import type { ManifestContent, ManifestEntry } from '../../../functions/core/spec/types.js';
import {
  allTypesPartition,
  allTypesSchema,
  allTypesSpec,
  entry,
  fullDataFile,
  makeTempWarehouse,
} from './manifest-fixtures.js';

const SNAPSHOT = 500n;

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(async () => {
  await warehouse.cleanup();
});

function write(entries: ManifestEntry[], content: ManifestContent = 0) {
  return writeManifest({
    io: warehouse.io,
    location: path.join(warehouse.dir, 'm.avro'),
    schema: allTypesSchema,
    spec: allTypesSpec,
    content,
    snapshotId: SNAPSHOT,
    entries,
  });
}

const file = (i = 0) => fullDataFile(i, allTypesPartition(i), allTypesSpec['spec-id']);
const added = { snapshot: null, data: null, file: null };

describe('writeManifest refuses entries that do not belong', () => {
  const cases: [string, () => ManifestEntry[], ManifestContent, RegExp][] = [
    [
      'a data file in a delete manifest',
      () => [entry(1, file(), added)],
      1,
      /data file cannot go in a delete manifest/,
    ],
    [
      'a delete file in a data manifest',
      () => [entry(1, { ...file(), content: 1 }, added)],
      0,
      /delete file cannot go in a data manifest/,
    ],
    ['a file of another spec', () => [entry(1, { ...file(), spec_id: 9 }, added)], 0, /spec 9/],
    [
      'an EXISTING entry without a sequence number',
      () => [entry(0, file(), { snapshot: 1n, data: null, file: null })],
      0,
      /only ADDED entries/,
    ],
    [
      'an EXISTING entry without a snapshot id',
      () => [entry(0, file(), { snapshot: null, data: 1n, file: 1n })],
      0,
      /EXISTING entry needs the snapshot id/,
    ],
    [
      'an ADDED entry of another snapshot that would inherit this one’s sequence number',
      () => [entry(1, file(), { snapshot: 1n, data: null, file: null })],
      0,
      /would be inherited from snapshot 500, not 1/,
    ],
    [
      'a missing partition value',
      () => {
        const { ts_day: _dropped, ...partition } = allTypesPartition(0);
        return [entry(1, { ...file(), partition }, added)];
      },
      0,
      /partition value for 'ts_day' is missing/,
    ],
    [
      'a partition value of the wrong representation',
      () => [entry(1, { ...file(), partition: { ...allTypesPartition(0), amount: 12.5 } }, added)],
      0,
      /'amount' \(decimal\(10, 2\)\) is not valid/,
    ],
    [
      'a decimal too wide for its precision',
      () => [entry(1, { ...file(), partition: { ...allTypesPartition(0), amount: 2n ** 40n } }, added)],
      0,
      /'amount'/,
    ],
    [
      'a fixed of the wrong length',
      () => [entry(1, { ...file(), partition: { ...allTypesPartition(0), code: Uint8Array.of(1) } }, added)],
      0,
      /'code'/,
    ],
  ];
  for (const [what, entries, content, message] of cases) {
    it(`refuses ${what}`, async () => {
      const attempt = write(entries(), content);
      await expect(attempt).rejects.toThrow(ValidationError);
      await expect(attempt).rejects.toThrow(message);
      expect(await warehouse.io.exists(path.join(warehouse.dir, 'm.avro'))).toBe(false);
    });
  }

  it('accepts DELETED entries with a null snapshot id and gives them this snapshot’s id', async () => {
    const written = await write([entry(2, file(), { snapshot: null, data: 4n, file: 4n })]);
    expect(written.deleted_files_count).toBe(1);
    expect(written.min_sequence_number).toBe(-1n); // DELETED entries do not count towards the minimum
  });
});
