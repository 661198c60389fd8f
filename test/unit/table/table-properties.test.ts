import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { parquetCodec, targetFileSizeBytes } from '../../../functions/core/table/table-properties.js';

describe('table properties', () => {
  it("reads write.* with Iceberg's defaults", () => {
    expect(parquetCodec({})).toBe('zstd');
    expect(parquetCodec({ 'write.parquet.compression-codec': 'SNAPPY' })).toBe('snappy');
    expect(targetFileSizeBytes({})).toBe(512 * 1024 * 1024);
    expect(targetFileSizeBytes({ 'write.target-file-size-bytes': '1048576' })).toBe(1048576);
  });

  it('refuses a Parquet codec floe does not write', () => {
    expect(() => parquetCodec({ 'write.parquet.compression-codec': 'lz4' })).toThrow(ValidationError);
  });
});
