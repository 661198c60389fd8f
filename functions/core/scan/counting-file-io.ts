import type { FileIO } from '../io/file-io.js';

/** A FileIO that passes every call through and counts the bytes read (for a scan's `bytesRead`). */
export class CountingFileIO implements FileIO {
  bytesRead = 0;

  constructor(private readonly inner: FileIO) {}

  /** @throws whatever the wrapped FileIO throws */
  async read(location: string): Promise<Uint8Array> {
    const bytes = await this.inner.read(location);
    this.bytesRead += bytes.byteLength;
    return bytes;
  }

  /** @throws whatever the wrapped FileIO throws */
  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    const bytes = await this.inner.readRange(location, offset, length);
    this.bytesRead += bytes.byteLength;
    return bytes;
  }

  write(location: string, data: Uint8Array): Promise<void> {
    return this.inner.write(location, data);
  }

  writeIfAbsent(location: string, data: Uint8Array): Promise<void> {
    return this.inner.writeIfAbsent(location, data);
  }

  stat(location: string): Promise<{ size: number; lastModifiedMs: number } | undefined> {
    return this.inner.stat(location);
  }

  exists(location: string): Promise<boolean> {
    return this.inner.exists(location);
  }

  delete(location: string): Promise<void> {
    return this.inner.delete(location);
  }

  list(prefix: string): Promise<{ location: string; size: number; lastModifiedMs: number }[]> {
    return this.inner.list(prefix);
  }
}
