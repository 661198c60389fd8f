/**
 * FileIO: the storage a table's files live in. Locations are URIs (`file:///abs/path`, `s3://bucket/key`);
 * plain absolute paths are accepted for the local filesystem.
 */
export interface FileIO {
  /** Reads a whole object. @throws NotFoundError when absent; TransientIOError when a retry may help. */
  read(location: string): Promise<Uint8Array>;
  /** Reads `length` bytes at `offset` (for Parquet footers). @throws NotFoundError */
  readRange(location: string, offset: number, length: number): Promise<Uint8Array>;
  /** Writes an object, replacing any existing one. */
  write(location: string, data: Uint8Array): Promise<void>;
  /**
   * Writes an object only if none exists at that location (S3 `If-None-Match: *`, local `O_EXCL` link).
   * @throws AlreadyExistsError when one does.
   */
  writeIfAbsent(location: string, data: Uint8Array): Promise<void>;
  /** Size in bytes, or undefined when absent. */
  stat(location: string): Promise<{ size: number; lastModifiedMs: number } | undefined>;
  exists(location: string): Promise<boolean>;
  /** Deletes an object; absent objects are fine. */
  delete(location: string): Promise<void>;
  /** Lists every object under a prefix (recursively), with size and modification time. */
  list(prefix: string): Promise<{ location: string; size: number; lastModifiedMs: number }[]>;
}
