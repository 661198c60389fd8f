import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  readCommitProperties,
  readIngestProperties,
  readMaintenanceProperties,
  readTableProperties,
  readWriteProperties,
} from '../../../functions/core/spec/table-properties.js';

const FIX =
  "; set it to an accepted value or remove it (unset means %s), e.g. with your engine's ALTER TABLE … SET/UNSET TBLPROPERTIES";

/** The error a malformed property gives, as a user reads it. */
function refusal(name: string, accepts: string, raw: string, unsetMeans: string): string {
  return `table property ${name}: must be ${accepts}, got ${JSON.stringify(raw)}${FIX.replace('%s', unsetMeans)}`;
}

/** Reads one property alone, through the reader of its concern. */
function readOne(name: string, raw: string | undefined): unknown {
  const properties = raw === undefined ? {} : { [name]: raw };
  const all = readTableProperties(properties);
  const groups: Record<string, unknown>[] = [all.write, all.commit, all.maintenance, all.ingest];
  const field = FIELD_OF[name];
  const group = groups.find((g) => field in g);
  if (group === undefined) throw new Error(`no reader holds ${name}`);
  return group[field];
}

const FIELD_OF: Record<string, string> = {
  'write.target-file-size-bytes': 'targetFileSizeBytes',
  'write.parquet.compression-codec': 'parquetCodec',
  'write.parquet.page-row-limit': 'pageRowLimit',
  'write.avro.compression-codec': 'avroCodec',
  'commit.retry.num-retries': 'numRetries',
  'commit.retry.min-wait-ms': 'minWaitMs',
  'commit.retry.max-wait-ms': 'maxWaitMs',
  'commit.retry.total-timeout-ms': 'totalTimeoutMs',
  'commit.manifest-merge.enabled': 'manifestMergeEnabled',
  'commit.manifest.min-count-to-merge': 'manifestMinCountToMerge',
  'commit.manifest.target-size-bytes': 'manifestTargetSizeBytes',
  'write.metadata.previous-versions-max': 'metadataPreviousVersionsMax',
  'write.metadata.delete-after-commit.enabled': 'metadataDeleteAfterCommit',
  'history.expire.max-snapshot-age-ms': 'maxSnapshotAgeMs',
  'history.expire.min-snapshots-to-keep': 'minSnapshotsToKeep',
  'history.expire.max-ref-age-ms': 'maxRefAgeMs',
  'floe.maintenance.max-group-bytes': 'maxGroupBytes',
  'floe.maintenance.min-input-files': 'minInputFiles',
  'floe.maintenance.max-groups-per-run': 'maxGroupsPerRun',
  'floe.maintenance.convert-equality-deletes.max-file-group-size-bytes': 'convertGroupBytes',
  'floe.mode': 'mode',
  'floe.identifier-columns': 'identifierColumns',
  'floe.cdc.source-column': 'cdcSourceColumn',
  'floe.schema-evolution': 'schemaEvolution',
  'floe.delete-mode': 'deleteMode',
  'floe.kafka-value': 'kafkaValue',
};

interface IntegerCase {
  name: string;
  unset: number | undefined;
  min: number;
  unsetMeans?: string;
}

// Iceberg's defaults (https://iceberg.apache.org/docs/latest/configuration/#table-properties), floe's
// where floe has its own property or its own default.
const INTEGERS: IntegerCase[] = [
  { name: 'write.target-file-size-bytes', unset: 536_870_912, min: 1 },
  { name: 'write.parquet.page-row-limit', unset: undefined, min: 1, unsetMeans: "floe's 5,000" },
  { name: 'commit.retry.num-retries', unset: 4, min: 0 },
  { name: 'commit.retry.min-wait-ms', unset: 100, min: 0 },
  { name: 'commit.retry.max-wait-ms', unset: 60_000, min: 0 },
  { name: 'commit.retry.total-timeout-ms', unset: 1_800_000, min: 0 },
  { name: 'commit.manifest.min-count-to-merge', unset: 100, min: 0 },
  { name: 'commit.manifest.target-size-bytes', unset: 8_388_608, min: 1 },
  { name: 'write.metadata.previous-versions-max', unset: 100, min: 0 },
  { name: 'history.expire.max-snapshot-age-ms', unset: 432_000_000, min: 1 },
  { name: 'history.expire.min-snapshots-to-keep', unset: 1, min: 1 },
  { name: 'history.expire.max-ref-age-ms', unset: Number.POSITIVE_INFINITY, min: 1, unsetMeans: 'no limit' },
  { name: 'floe.maintenance.max-group-bytes', unset: 134_217_728, min: 1 },
  { name: 'floe.maintenance.min-input-files', unset: 2, min: 2 },
  { name: 'floe.maintenance.max-groups-per-run', unset: 400, min: 1 },
  { name: 'floe.maintenance.convert-equality-deletes.max-file-group-size-bytes', unset: 16_777_216, min: 1 },
];

describe('table properties: integers', () => {
  it.each(INTEGERS)('$name: unset, a good value, and each kind of malformed one', (c) => {
    // Prepare
    const accepts = `an integer ≥ ${c.min}`;
    const unsetMeans = c.unsetMeans ?? String(c.unset);
    const good = String(c.min + 4000);

    // Act / Assess
    expect(readOne(c.name, undefined)).toBe(c.unset);
    expect(readOne(c.name, good)).toBe(c.min + 4000);
    expect(readOne(c.name, String(c.min))).toBe(c.min);
    for (const raw of ['abc', '', '1.5', '1e6', '-1', ' 12', '0x10', String(c.min - 1)]) {
      if (raw === String(c.min - 1) && c.min === 0) continue; // -1, already refused above
      expect(() => readOne(c.name, raw), raw).toThrow(ValidationError);
      expect(() => readOne(c.name, raw), raw).toThrow(refusal(c.name, accepts, raw, unsetMeans));
    }
  });

  it('reads a long as large as Java writes (Long.MAX_VALUE for no limit)', () => {
    expect(readOne('history.expire.max-ref-age-ms', '9223372036854775807')).toBeGreaterThan(9e18);
  });
});

describe('table properties: booleans', () => {
  it.each([
    { name: 'commit.manifest-merge.enabled', unset: true },
    { name: 'write.metadata.delete-after-commit.enabled', unset: false },
    { name: 'floe.kafka-value', unset: false },
  ])('$name: unset, true/false in any case, and anything else refused', ({ name, unset }) => {
    expect(readOne(name, undefined)).toBe(unset);
    expect(readOne(name, 'true')).toBe(true);
    expect(readOne(name, 'FALSE')).toBe(false);
    for (const raw of ['yes', '1', '', 'off']) {
      expect(() => readOne(name, raw)).toThrow(refusal(name, 'true or false', raw, String(unset)));
    }
  });
});

describe('table properties: codecs', () => {
  const PARQUET = 'one of zstd, snappy, gzip, uncompressed (the Parquet codecs floe writes)';
  const AVRO = 'one of gzip, uncompressed (the Avro codecs floe writes; deflate and null name them too)';

  it("reads write.* with Iceberg's defaults", () => {
    expect(readWriteProperties({}).parquetCodec).toBe('zstd');
    expect(readWriteProperties({ 'write.parquet.compression-codec': 'SNAPPY' }).parquetCodec).toBe('snappy');
    expect(readWriteProperties({}).targetFileSizeBytes).toBe(512 * 1024 * 1024);
    expect(readWriteProperties({ 'write.target-file-size-bytes': '1048576' }).targetFileSizeBytes).toBe(
      1048576,
    );
  });

  it('refuses a Parquet codec floe does not write', () => {
    expect(() => readWriteProperties({ 'write.parquet.compression-codec': 'lz4' })).toThrow(ValidationError);
    for (const raw of ['lz4', 'brotli', 'lzo', '', 'zstd ']) {
      expect(() => readOne('write.parquet.compression-codec', raw)).toThrow(
        refusal('write.parquet.compression-codec', PARQUET, raw, 'zstd'),
      );
    }
  });

  it('reads the Avro codec by Iceberg name (gzip is Avro deflate) and Avro name', () => {
    expect(readOne('write.avro.compression-codec', undefined)).toBe('deflate');
    expect(readOne('write.avro.compression-codec', 'gzip')).toBe('deflate');
    expect(readOne('write.avro.compression-codec', 'GZIP')).toBe('deflate');
    expect(readOne('write.avro.compression-codec', 'deflate')).toBe('deflate');
    expect(readOne('write.avro.compression-codec', 'uncompressed')).toBe('null');
    expect(readOne('write.avro.compression-codec', 'null')).toBe('null');
  });

  it('refuses an Avro codec floe does not write instead of writing deflate', () => {
    for (const raw of ['snappy', 'zstd', 'none', '']) {
      expect(() => readOne('write.avro.compression-codec', raw)).toThrow(
        refusal('write.avro.compression-codec', AVRO, raw, 'gzip'),
      );
    }
  });
});

describe('table properties: floe.*', () => {
  it('floe.mode: unset, each mode, and anything else refused (exactly as written)', () => {
    expect(readOne('floe.mode', undefined)).toBeUndefined();
    for (const mode of ['append', 'debezium', 'upsert']) expect(readOne('floe.mode', mode)).toBe(mode);
    for (const raw of ['merge', 'Upsert', '']) {
      expect(() => readOne('floe.mode', raw)).toThrow(
        refusal('floe.mode', 'one of append, debezium, upsert', raw, "the route's mode, else append"),
      );
    }
  });

  it('floe.schema-evolution: unset, each policy, and anything else refused', () => {
    expect(readOne('floe.schema-evolution', undefined)).toBeUndefined();
    for (const p of ['evolve', 'dlq', 'block']) expect(readOne('floe.schema-evolution', p)).toBe(p);
    expect(() => readOne('floe.schema-evolution', 'on')).toThrow(
      refusal('floe.schema-evolution', 'one of evolve, dlq, block', 'on', "the route's policy, else evolve"),
    );
  });

  it('floe.delete-mode: unset is position, each mode, and anything else (other cases too) refused', () => {
    expect(readOne('floe.delete-mode', undefined)).toBe('position');
    for (const m of ['position', 'equality']) expect(readOne('floe.delete-mode', m)).toBe(m);
    for (const raw of ['Equality', 'merge', '']) {
      expect(() => readOne('floe.delete-mode', raw)).toThrow(
        refusal('floe.delete-mode', 'one of position, equality', raw, 'position'),
      );
    }
  });

  it('floe.identifier-columns: a list of names; an empty name refused', () => {
    expect(readOne('floe.identifier-columns', undefined)).toBeUndefined();
    expect(readOne('floe.identifier-columns', 'pk.tenant,id')).toEqual(['pk.tenant', 'id']);
    for (const raw of ['', 'a,,b', 'a,']) {
      expect(() => readOne('floe.identifier-columns', raw)).toThrow(
        refusal(
          'floe.identifier-columns',
          'column names separated by commas',
          raw,
          "the schema's identifier-field-ids",
        ),
      );
    }
  });

  it('floe.cdc.source-column: a name; the empty one refused', () => {
    expect(readOne('floe.cdc.source-column', undefined)).toBeUndefined();
    expect(readOne('floe.cdc.source-column', '_source')).toBe('_source');
    expect(() => readOne('floe.cdc.source-column', '')).toThrow(
      refusal('floe.cdc.source-column', 'the name of a top-level struct column', '', 'none'),
    );
  });
});

describe('table properties: a table', () => {
  it('keeps and ignores properties it does not read', () => {
    // Prepare: another engine's properties beside floe's
    const properties = {
      'write.format.default': 'orc',
      'spark.sql.whatever': 'x',
      'commit.retry.num-retries': '7',
    };

    // Act
    const read = readTableProperties(properties);

    // Assess
    expect(read.commit.numRetries).toBe(7);
    expect(read.write.parquetCodec).toBe('zstd');
    expect(properties['spark.sql.whatever']).toBe('x');
  });

  it('stops only the concern a malformed property governs', () => {
    // Prepare
    const properties = { 'history.expire.max-snapshot-age-ms': 'soon' };

    // Act / Assess: writing and committing go on, maintenance is refused
    expect(readWriteProperties(properties).targetFileSizeBytes).toBe(536_870_912);
    expect(readCommitProperties(properties).numRetries).toBe(4);
    expect(readIngestProperties(properties).mode).toBeUndefined();
    expect(() => readMaintenanceProperties(properties)).toThrow('history.expire.max-snapshot-age-ms');
    expect(() => readTableProperties(properties)).toThrow('history.expire.max-snapshot-age-ms');
  });

  it('has a field for every property it is tested with, and reads no property untested', () => {
    const all = readTableProperties({});
    const fields = [all.write, all.commit, all.maintenance, all.ingest].flatMap((g) => Object.keys(g));
    expect(fields.sort()).toEqual(Object.values(FIELD_OF).sort());
  });
});
