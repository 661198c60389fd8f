/**
 * Every table property floe reads, in one place: Iceberg's, with Iceberg's names, types and defaults
 * (https://iceberg.apache.org/docs/latest/configuration/#table-properties), and floe's own `floe.*`.
 * A value a property does not take is a ValidationError naming the property, the value and what it
 * accepts (property-values.ts); an Iceberg codec floe does not write is refused, not swapped for another.
 * Properties floe does not read are kept in the metadata and ignored here: other engines set their own.
 *
 * One reader per concern, so a malformed property stops only what it governs: writing files reads
 * `write.*` (readWriteProperties), a commit `commit.*` and `write.metadata.*` (readCommitProperties),
 * maintenance `history.expire.*` and `floe.maintenance.*` (readMaintenanceProperties), ingest the
 * `floe.*` a route stores with its table (readIngestProperties). readTableProperties reads them all.
 */
import {
  booleanProperty,
  choiceProperty,
  integerProperty,
  type PropertyDefinition,
  readProperty,
  textProperty,
} from './property-values.js';

/** How a table takes its records (routing/routes.ts): rows as they come, or changes to a keyed table. */
export type IngestMode = 'append' | 'debezium' | 'upsert';
export const INGEST_MODES: readonly IngestMode[] = ['append', 'debezium', 'upsert'];

/** What a batch needing a different schema does (mapping/evolution/evolution-policy.ts says each). */
export type EvolutionPolicy = 'evolve' | 'dlq' | 'block';
export const EVOLUTION_POLICIES: readonly EvolutionPolicy[] = ['evolve', 'dlq', 'block'];

/** The Parquet codecs floe writes, by Iceberg's names. */
export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'uncompressed';
/** The Avro codecs floe writes manifests with, by Avro's names (Iceberg's gzip is Avro's deflate). */
export type AvroCompression = 'deflate' | 'null';

export const MODE_PROPERTY = 'floe.mode';
export const IDENTIFIER_PROPERTY = 'floe.identifier-columns';
/** Names the struct column that keeps a Debezium envelope's `source` block (none by default). */
export const SOURCE_COLUMN_PROPERTY = 'floe.cdc.source-column';
export const EVOLUTION_PROPERTY = 'floe.schema-evolution';
/** How a keyed (CDC, upsert, aggregate) table marks the rows a batch replaces or deletes. */
export const DELETE_MODE_PROPERTY = 'floe.delete-mode';
/** `true`: rows keep the record's original value bytes in `_kafka.value` (a route's `kafkaValue`). */
export const KAFKA_VALUE_PROPERTY = 'floe.kafka-value';

/**
 * `position`: position delete files naming each replaced row's data file and row (every Iceberg reader
 * applies them, PyIceberg included); `equality`: equality delete files holding the replaced keys
 * (cheaper to write, refused by some readers, slower for every reader).
 */
export type DeleteMode = 'position' | 'equality';
export const DELETE_MODES: readonly DeleteMode[] = ['position', 'equality'];

/** Iceberg's `write.target-file-size-bytes` default: 512 MiB. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * 1024 * 1024;
/** Iceberg's `history.expire.max-snapshot-age-ms` default: 5 days. */
export const DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 3_600_000;
/** Iceberg's `history.expire.min-snapshots-to-keep` default. */
export const DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1;
/**
 * `floe.maintenance.max-group-bytes` default: input bytes one compaction group may hold. Rows are
 * decoded into memory to apply deletes and sort: 128 MiB of compressed Parquet stays well inside a
 * 3 GB Lambda and its 15 minutes.
 */
export const DEFAULT_MAX_GROUP_BYTES = 128 * 1024 * 1024;
/**
 * `floe.maintenance.max-groups-per-run` default: each group travels through the state machine's state
 * twice (plan, result), which Step Functions caps at 256 KB. The rest wait for the next run.
 */
export const DEFAULT_MAX_GROUPS_PER_RUN = 400;
/**
 * `floe.maintenance.convert-equality-deletes.max-file-group-size-bytes` default: equality delete bytes
 * converted (and committed) together. Their keys are held in memory as a set while the data files they
 * apply to are read: 16 MiB of compressed keys stays well inside a 3 GB Lambda.
 */
export const DEFAULT_CONVERT_GROUP_BYTES = 16 * 1024 * 1024;
/** A rewrite group of one file rewrites nothing: `floe.maintenance.min-input-files` is at least this. */
export const MIN_INPUT_FILES = 2;

const NAMES_ARE_LOWER = { ignoreCase: true } as const;

const WRITE = {
  targetFileSizeBytes: integerProperty('write.target-file-size-bytes', 1, DEFAULT_TARGET_FILE_SIZE_BYTES),
  // Iceberg's default since 1.4; lzo, brotli and lz4 are Iceberg codecs floe does not write.
  parquetCodec: choiceProperty<ParquetCompression, ParquetCompression>(
    'write.parquet.compression-codec',
    { zstd: 'zstd', snappy: 'snappy', gzip: 'gzip', uncompressed: 'uncompressed' },
    'zstd',
    {
      ...NAMES_ARE_LOWER,
      accepts: 'one of zstd, snappy, gzip, uncompressed (the Parquet codecs floe writes)',
    },
  ),
  // Unset is the writer's own default, 5,000 rows (data/parquet/write-batch.ts PAGE_ROWS says why);
  // Iceberg's is 20,000.
  pageRowLimit: integerProperty('write.parquet.page-row-limit', 1, undefined, "floe's 5,000"),
  // Iceberg's default gzip is Avro's deflate; floe writes no snappy or zstd manifests. Avro's own names
  // (deflate, null) are read too.
  avroCodec: choiceProperty<AvroCompression, AvroCompression>(
    'write.avro.compression-codec',
    { gzip: 'deflate', deflate: 'deflate', uncompressed: 'null', null: 'null' },
    'deflate',
    {
      ...NAMES_ARE_LOWER,
      accepts: 'one of gzip, uncompressed (the Avro codecs floe writes; deflate and null name them too)',
      unsetMeans: 'gzip',
    },
  ),
} satisfies Record<string, PropertyDefinition<unknown>>;

const COMMIT = {
  numRetries: integerProperty('commit.retry.num-retries', 0, 4),
  minWaitMs: integerProperty('commit.retry.min-wait-ms', 0, 100),
  maxWaitMs: integerProperty('commit.retry.max-wait-ms', 0, 60_000),
  totalTimeoutMs: integerProperty('commit.retry.total-timeout-ms', 0, 1_800_000),
  manifestMergeEnabled: booleanProperty('commit.manifest-merge.enabled', true),
  manifestMinCountToMerge: integerProperty('commit.manifest.min-count-to-merge', 0, 100),
  manifestTargetSizeBytes: integerProperty('commit.manifest.target-size-bytes', 1, 8 * 1024 * 1024),
  metadataPreviousVersionsMax: integerProperty('write.metadata.previous-versions-max', 0, 100),
  metadataDeleteAfterCommit: booleanProperty('write.metadata.delete-after-commit.enabled', false),
} satisfies Record<string, PropertyDefinition<unknown>>;

const MAINTENANCE = {
  maxSnapshotAgeMs: integerProperty('history.expire.max-snapshot-age-ms', 1, DEFAULT_MAX_SNAPSHOT_AGE_MS),
  minSnapshotsToKeep: integerProperty(
    'history.expire.min-snapshots-to-keep',
    1,
    DEFAULT_MIN_SNAPSHOTS_TO_KEEP,
  ),
  // Iceberg's default is Long.MAX_VALUE: refs other than main never age out.
  maxRefAgeMs: integerProperty('history.expire.max-ref-age-ms', 1, Number.POSITIVE_INFINITY, 'no limit'),
  maxGroupBytes: integerProperty('floe.maintenance.max-group-bytes', 1, DEFAULT_MAX_GROUP_BYTES),
  minInputFiles: integerProperty('floe.maintenance.min-input-files', MIN_INPUT_FILES, MIN_INPUT_FILES),
  maxGroupsPerRun: integerProperty('floe.maintenance.max-groups-per-run', 1, DEFAULT_MAX_GROUPS_PER_RUN),
  convertGroupBytes: integerProperty(
    'floe.maintenance.convert-equality-deletes.max-file-group-size-bytes',
    1,
    DEFAULT_CONVERT_GROUP_BYTES,
  ),
} satisfies Record<string, PropertyDefinition<unknown>>;

const identifierColumns: PropertyDefinition<string[] | undefined> = {
  name: IDENTIFIER_PROPERTY,
  accepts: 'column names separated by commas',
  unset: undefined,
  unsetMeans: "the schema's identifier-field-ids",
  parse: (raw) => {
    const names = raw.split(',');
    return names.every((n) => n !== '') ? names : undefined;
  },
};

const INGEST = {
  mode: choiceProperty<IngestMode, undefined>(
    MODE_PROPERTY,
    Object.fromEntries(INGEST_MODES.map((m) => [m, m])),
    undefined,
    { unsetMeans: "the route's mode, else append" },
  ),
  identifierColumns,
  cdcSourceColumn: textProperty(SOURCE_COLUMN_PROPERTY, 'the name of a top-level struct column'),
  schemaEvolution: choiceProperty<EvolutionPolicy, undefined>(
    EVOLUTION_PROPERTY,
    Object.fromEntries(EVOLUTION_POLICIES.map((p) => [p, p])),
    undefined,
    { unsetMeans: "the route's policy, else evolve" },
  ),
  // Tables written before the property existed hold equality deletes; position ones apply beside them.
  deleteMode: choiceProperty<DeleteMode, DeleteMode>(
    DELETE_MODE_PROPERTY,
    Object.fromEntries(DELETE_MODES.map((m) => [m, m])),
    'position',
    { accepts: 'one of position, equality', unsetMeans: 'position' },
  ),
  kafkaValue: booleanProperty(KAFKA_VALUE_PROPERTY, false),
} satisfies Record<string, PropertyDefinition<unknown>>;

type Values<D extends Record<string, PropertyDefinition<unknown>>> = {
  readonly [K in keyof D]: D[K] extends PropertyDefinition<infer T> ? T : never;
};

/** What writing data files and manifests honours. */
export type WriteProperties = Values<typeof WRITE>;
/** What a commit honours: its retries (`commit.retry.*`), manifest merging, the metadata log. */
export type CommitProperties = Values<typeof COMMIT>;
/** What maintenance aims at: snapshot expiry (`history.expire.*`) and compaction (`floe.maintenance.*`). */
export type MaintenanceProperties = Values<typeof MAINTENANCE>;
/** What a route stored with its table; unset ones are undefined (the route or floe decides). */
export type IngestProperties = Values<typeof INGEST>;

export interface TableProperties {
  readonly write: WriteProperties;
  readonly commit: CommitProperties;
  readonly maintenance: MaintenanceProperties;
  readonly ingest: IngestProperties;
}

type Properties = Readonly<Record<string, string>> | undefined;

function readAll<D extends Record<string, PropertyDefinition<unknown>>>(
  properties: Properties,
  defs: D,
): Values<D> {
  return Object.fromEntries(
    Object.entries(defs).map(([key, definition]) => [key, readProperty(properties, definition)]),
  ) as Values<D>;
}

/**
 * `write.*` for data files and manifests.
 * @throws ValidationError naming a malformed property, or a codec floe does not write
 */
export function readWriteProperties(properties: Properties): WriteProperties {
  return readAll(properties, WRITE);
}

/**
 * `commit.*` and `write.metadata.*`.
 * @throws ValidationError naming a malformed property
 */
export function readCommitProperties(properties: Properties): CommitProperties {
  return readAll(properties, COMMIT);
}

/**
 * `history.expire.*` and `floe.maintenance.*`.
 * @throws ValidationError naming a malformed property
 */
export function readMaintenanceProperties(properties: Properties): MaintenanceProperties {
  return readAll(properties, MAINTENANCE);
}

/**
 * `floe.mode`, `floe.identifier-columns`, `floe.cdc.source-column`, `floe.schema-evolution`,
 * `floe.delete-mode`, `floe.kafka-value`.
 * @throws ValidationError naming a malformed property
 */
export function readIngestProperties(properties: Properties): IngestProperties {
  return readAll(properties, INGEST);
}

/**
 * Every property floe reads.
 * @throws ValidationError naming the first malformed property
 */
export function readTableProperties(properties: Properties): TableProperties {
  return {
    write: readWriteProperties(properties),
    commit: readCommitProperties(properties),
    maintenance: readMaintenanceProperties(properties),
    ingest: readIngestProperties(properties),
  };
}
