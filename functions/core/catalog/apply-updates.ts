/**
 * The catalog-side semantics of a commit, shared by the embedded catalog and the test REST server:
 * check requirements against the current metadata, then apply updates to produce the next metadata.
 * Mirrors Iceberg's `UpdateRequirement.validate` and `TableMetadata.Builder` for the updates floe uses.
 */
import { CommitFailedError, ValidationError } from '../errors.js';
import { maxFieldId } from '../spec/schema-index.js';
import { readCommitProperties } from '../spec/table-properties.js';
import type { MetadataLogEntry, Snapshot, SnapshotId, TableMetadata } from '../spec/types.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';

const MAIN = 'main';

function refSnapshotId(md: TableMetadata, ref: string): SnapshotId | null {
  const r = md.refs?.[ref];
  if (r) return r['snapshot-id'];
  if (ref === MAIN) {
    const id = md['current-snapshot-id'];
    return id === undefined || id === null || id === -1n ? null : id;
  }
  return null;
}

/**
 * Validates requirements against the table's current metadata (undefined = table absent).
 * @throws CommitFailedError naming the first requirement that does not hold (REST: 409)
 */
export function checkRequirements(
  current: TableMetadata | undefined,
  requirements: TableRequirement[],
): void {
  for (const req of requirements) {
    if (req.type === 'assert-create') {
      if (current) throw new CommitFailedError('requirement failed: table already exists (assert-create)');
      continue;
    }
    if (!current) throw new CommitFailedError(`requirement failed: table does not exist (${req.type})`);
    const fail = (what: string) => {
      throw new CommitFailedError(`requirement failed: ${req.type}: ${what}`);
    };
    switch (req.type) {
      case 'assert-table-uuid':
        if (current['table-uuid'] !== req.uuid)
          fail(`table uuid is ${current['table-uuid']}, expected ${req.uuid}`);
        break;
      case 'assert-ref-snapshot-id': {
        const actual = refSnapshotId(current, req.ref);
        if (actual !== req['snapshot-id']) {
          fail(
            `ref '${req.ref}' points at ${actual ?? 'nothing'}, expected ${req['snapshot-id'] ?? 'nothing'}`,
          );
        }
        break;
      }
      case 'assert-last-assigned-field-id':
        if (current['last-column-id'] !== req['last-assigned-field-id']) {
          fail(`last column id is ${current['last-column-id']}, expected ${req['last-assigned-field-id']}`);
        }
        break;
      case 'assert-current-schema-id':
        if (current['current-schema-id'] !== req['current-schema-id']) {
          fail(`current schema is ${current['current-schema-id']}, expected ${req['current-schema-id']}`);
        }
        break;
      case 'assert-last-assigned-partition-id':
        if (current['last-partition-id'] !== req['last-assigned-partition-id']) {
          fail(
            `last partition id is ${current['last-partition-id']}, expected ${req['last-assigned-partition-id']}`,
          );
        }
        break;
      case 'assert-default-spec-id':
        if (current['default-spec-id'] !== req['default-spec-id']) {
          fail(`default spec is ${current['default-spec-id']}, expected ${req['default-spec-id']}`);
        }
        break;
      case 'assert-default-sort-order-id':
        if (current['default-sort-order-id'] !== req['default-sort-order-id']) {
          fail(
            `default sort order is ${current['default-sort-order-id']}, expected ${req['default-sort-order-id']}`,
          );
        }
        break;
      default:
        throw new ValidationError(`unknown requirement type '${(req as { type: string }).type}'`);
    }
  }
}

export interface ApplyOptions {
  nowMs?: number;
  /** The metadata file being replaced; appended to the metadata-log. */
  previousMetadataLocation?: string;
}

/**
 * Applies updates to a copy of `base`. Never mutates `base`.
 * @throws ValidationError for malformed or unknown updates, or a malformed commit.* / write.metadata.*
 *   property in the result (REST: 400)
 */
export function applyUpdates(
  base: TableMetadata,
  updates: TableUpdate[],
  options: ApplyOptions = {},
): TableMetadata {
  const md: TableMetadata = structuredClone(base);
  md.refs ??= {};
  md.snapshots ??= [];
  md['snapshot-log'] ??= [];
  md['metadata-log'] ??= [];
  let lastAddedSchemaId: number | undefined;
  let lastAddedSpecId: number | undefined;
  let lastAddedSortOrderId: number | undefined;
  const now = options.nowMs ?? Date.now();
  let lastUpdated = now;

  for (const u of updates) {
    switch (u.action) {
      case 'assign-uuid':
        md['table-uuid'] = u.uuid;
        break;
      case 'upgrade-format-version':
        upgradeFormatVersion(md, u['format-version']);
        break;
      case 'add-schema': {
        const existing = md.schemas.find((s) => s['schema-id'] === u.schema['schema-id']);
        if (!existing) md.schemas.push(structuredClone(u.schema));
        lastAddedSchemaId = u.schema['schema-id'];
        md['last-column-id'] = Math.max(md['last-column-id'], u['last-column-id'] ?? 0, maxFieldId(u.schema));
        break;
      }
      case 'set-current-schema': {
        const id = u['schema-id'] === -1 ? lastAddedSchemaId : u['schema-id'];
        if (id === undefined || !md.schemas.some((s) => s['schema-id'] === id)) {
          throw new ValidationError(`set-current-schema: no schema ${u['schema-id']}`);
        }
        md['current-schema-id'] = id;
        break;
      }
      case 'add-spec': {
        if (!md['partition-specs'].some((s) => s['spec-id'] === u.spec['spec-id'])) {
          md['partition-specs'].push(structuredClone(u.spec));
        }
        lastAddedSpecId = u.spec['spec-id'];
        const maxId = u.spec.fields.reduce((m, f) => Math.max(m, f['field-id']), 999);
        md['last-partition-id'] = Math.max(md['last-partition-id'], maxId);
        break;
      }
      case 'set-default-spec': {
        const id = u['spec-id'] === -1 ? lastAddedSpecId : u['spec-id'];
        if (id === undefined || !md['partition-specs'].some((s) => s['spec-id'] === id)) {
          throw new ValidationError(`set-default-spec: no spec ${u['spec-id']}`);
        }
        md['default-spec-id'] = id;
        break;
      }
      case 'add-sort-order':
        if (!md['sort-orders'].some((o) => o['order-id'] === u['sort-order']['order-id'])) {
          md['sort-orders'].push(structuredClone(u['sort-order']));
        }
        lastAddedSortOrderId = u['sort-order']['order-id'];
        break;
      case 'set-default-sort-order': {
        const id = u['sort-order-id'] === -1 ? lastAddedSortOrderId : u['sort-order-id'];
        if (id === undefined || !md['sort-orders'].some((o) => o['order-id'] === id)) {
          throw new ValidationError(`set-default-sort-order: no sort order ${u['sort-order-id']}`);
        }
        md['default-sort-order-id'] = id;
        break;
      }
      case 'add-snapshot':
        addSnapshot(md, u.snapshot);
        lastUpdated = u.snapshot['timestamp-ms'];
        break;
      case 'set-snapshot-ref': {
        const { action: _action, 'ref-name': name, ...ref } = u;
        const snap = md.snapshots.find((s) => s['snapshot-id'] === ref['snapshot-id']);
        if (!snap) throw new ValidationError(`set-snapshot-ref '${name}': no snapshot ${ref['snapshot-id']}`);
        const unchanged = md.refs[name]?.['snapshot-id'] === ref['snapshot-id'];
        md.refs[name] = ref;
        if (name === MAIN && !unchanged) {
          md['current-snapshot-id'] = ref['snapshot-id'];
          md['snapshot-log'].push({
            'snapshot-id': ref['snapshot-id'],
            'timestamp-ms': snap['timestamp-ms'],
          });
        }
        break;
      }
      case 'remove-snapshots': {
        const removed = new Set(u['snapshot-ids']);
        md.snapshots = md.snapshots.filter((s) => !removed.has(s['snapshot-id']));
        for (const [name, ref] of Object.entries(md.refs))
          if (removed.has(ref['snapshot-id'])) delete md.refs[name];
        md['snapshot-log'] = md['snapshot-log'].filter((e) => !removed.has(e['snapshot-id']));
        if (!md.refs[MAIN]) md['current-snapshot-id'] = -1n;
        break;
      }
      case 'remove-snapshot-ref':
        delete md.refs[u['ref-name']];
        if (u['ref-name'] === MAIN) md['current-snapshot-id'] = -1n;
        break;
      case 'set-location':
        md.location = u.location;
        break;
      case 'set-properties':
        md.properties = { ...md.properties, ...u.updates };
        break;
      case 'remove-properties': {
        const props = { ...md.properties };
        for (const k of u.removals) delete props[k];
        md.properties = props;
        break;
      }
      default:
        throw new ValidationError(`unknown update action '${(u as { action: string }).action}'`);
    }
  }

  md['last-updated-ms'] = Math.max(lastUpdated, base['last-updated-ms']);
  if (options.previousMetadataLocation) {
    const log: MetadataLogEntry[] = [
      ...md['metadata-log'],
      { 'metadata-file': options.previousMetadataLocation, 'timestamp-ms': base['last-updated-ms'] },
    ];
    const max = readCommitProperties(md.properties).metadataPreviousVersionsMax;
    md['metadata-log'] = log.slice(Math.max(0, log.length - max));
  }
  return md;
}

function addSnapshot(md: TableMetadata, snapshot: Snapshot): void {
  if (md.snapshots.some((s) => s['snapshot-id'] === snapshot['snapshot-id'])) {
    throw new ValidationError(`add-snapshot: snapshot ${snapshot['snapshot-id']} already exists`);
  }
  // v2: every new snapshot must move the sequence number forward, or it could hide deletes.
  if (snapshot['sequence-number'] <= md['last-sequence-number']) {
    throw new CommitFailedError(
      `add-snapshot: sequence number ${snapshot['sequence-number']} is not above the table's ${md['last-sequence-number']}`,
    );
  }
  if (md['format-version'] >= 3) assignRowIds(md, snapshot);
  md.snapshots.push(structuredClone(snapshot));
  md['last-sequence-number'] = snapshot['sequence-number'];
}

/**
 * v3 row lineage, as Java's TableMetadata.Builder: a snapshot's row ids start at or above the table's
 * next-row-id (below it, ids would be handed out twice: it was prepared on an older base), and the
 * table's next-row-id moves past the ids it assigned.
 */
function assignRowIds(md: TableMetadata, snapshot: Snapshot): void {
  const first = snapshot['first-row-id'];
  const added = snapshot['added-rows'];
  if (first === undefined || added === undefined) {
    throw new ValidationError(
      `add-snapshot: snapshot ${snapshot['snapshot-id']} of a format-version 3 table needs first-row-id and added-rows`,
    );
  }
  const next = md['next-row-id'] ?? 0;
  if (first < next) {
    throw new CommitFailedError(
      `add-snapshot: first-row-id ${first} is behind the table's next-row-id ${next}`,
    );
  }
  md['next-row-id'] = first + added;
}

/** Moves to format version 2 or 3, never back; v3 starts row lineage at 0. */
function upgradeFormatVersion(md: TableMetadata, version: number): void {
  if ((version !== 2 && version !== 3) || version < md['format-version']) {
    throw new ValidationError(`cannot move from format version ${md['format-version']} to ${version}`);
  }
  md['format-version'] = version;
  if (version === 3) md['next-row-id'] ??= 0;
}
