/**
 * The FileIO for a table loaded from a REST catalog. With `X-Iceberg-Access-Delegation: vended-credentials`
 * the server may hand out storage credentials: in `storage-credentials` (checked first, longest matching
 * prefix wins, as the spec says) or in the table `config` (`s3.access-key-id`, `s3.secret-access-key`,
 * `s3.session-token`, `client.region`, `s3.endpoint`, `s3.path-style-access`).
 */
import type { FileIO } from '../../io/file-io.js';
import { getLocationScheme } from '../../io/location.js';
import { resolveFileIO } from '../../io/resolve-file-io.js';
import { S3FileIO, type S3FileIOOptions } from '../../io/s3-file-io.js';
import { registerSecret } from '../../redact.js';

export interface StorageCredential {
  prefix: string;
  config: Record<string, string>;
}

export interface TableFileIOOptions {
  /** The FileIO to use when the server vends nothing. @default by the location's scheme */
  io?: FileIO;
  /** Base options for S3FileIOs (endpoint, region, client...). */
  s3?: S3FileIOOptions;
}

/** The storage config that applies to `location`: the longest matching storage credential, else `config`. */
export function selectStorageConfig(
  location: string,
  config: Record<string, string>,
  storageCredentials: StorageCredential[],
): Record<string, string> {
  const matching = storageCredentials
    .filter((c) => location.startsWith(c.prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  return matching.length > 0 ? { ...config, ...matching[0].config } : config;
}

/**
 * An S3FileIO with the vended S3 credentials when there are any, else the configured or default FileIO.
 * @throws ValidationError when the location's scheme has no FileIO
 */
export function resolveTableFileIO(
  location: string,
  config: Record<string, string>,
  storageCredentials: StorageCredential[],
  options: TableFileIOOptions,
): FileIO {
  const storage = selectStorageConfig(location, config, storageCredentials);
  const accessKeyId = storage['s3.access-key-id'];
  const secretAccessKey = storage['s3.secret-access-key'];
  if (accessKeyId && secretAccessKey) {
    // vended secrets are redacted wherever a storage error might quote them
    registerSecret(secretAccessKey);
    registerSecret(storage['s3.session-token']);
    const { client: _shared, ...base } = options.s3 ?? {};
    const pathStyle = storage['s3.path-style-access'];
    return new S3FileIO({
      ...base,
      region: storage['client.region'] ?? base.region,
      endpoint: storage['s3.endpoint'] ?? base.endpoint,
      forcePathStyle: pathStyle === undefined ? base.forcePathStyle : pathStyle === 'true',
      credentials: { accessKeyId, secretAccessKey, sessionToken: storage['s3.session-token'] },
    });
  }
  return options.io ?? resolveFileIO(location, { s3: options.s3 });
}

const VENDED_KEYS = [
  's3.access-key-id',
  's3.secret-access-key',
  's3.session-token',
  'client.region',
  's3.endpoint',
  's3.path-style-access',
];

/**
 * FileIOs for the tables of one catalog, reused while the storage settings they were built from stay the
 * same: every load answers with a config, and a new S3 client per load would waste connections.
 */
export class TableFileIOs {
  private readonly byTable = new Map<string, { key: string; io: FileIO }>();
  private readonly defaults = new Map<string, FileIO>();

  constructor(private readonly options: TableFileIOOptions) {}

  /** @throws ValidationError when the location's scheme has no FileIO */
  resolve(
    table: string,
    location: string,
    config: Record<string, string>,
    storageCredentials: StorageCredential[],
  ): FileIO {
    const storage = selectStorageConfig(location, config, storageCredentials);
    if (!storage['s3.access-key-id'] || !storage['s3.secret-access-key']) {
      const scheme = getLocationScheme(location) ?? 'file';
      let io = this.defaults.get(scheme);
      if (!io) {
        io = resolveTableFileIO(location, {}, [], this.options);
        this.defaults.set(scheme, io);
      }
      this.byTable.set(table, { key: '', io });
      return io;
    }
    const key = JSON.stringify(VENDED_KEYS.map((k) => storage[k] ?? null));
    const cached = this.byTable.get(table);
    if (cached?.key === key) return cached.io;
    const io = resolveTableFileIO(location, storage, [], this.options);
    this.byTable.set(table, { key, io });
    return io;
  }

  /** The FileIO a table was last loaded with, if any. */
  get(table: string): FileIO | undefined {
    return this.byTable.get(table)?.io;
  }

  forget(table: string): void {
    this.byTable.delete(table);
  }
}
