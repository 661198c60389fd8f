/**
 * A warehouse whose locations are loopback HTTP URLs, backed by a local temp folder: floe writes
 * through a FileIO that maps `http://127.0.0.1:<port>/...` to the folder, and a small static server
 * (with Range support) serves the same folder, so URL-only readers such as icebird can read what
 * floe wrote, with the paths the metadata really contains.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import { LocalFileIO } from '../../functions/core/io/local-file-io.js';

class MappedFileIO implements FileIO {
  private readonly local = new LocalFileIO();
  constructor(
    private readonly base: string,
    private readonly dir: string,
  ) {}
  private path(location: string): string {
    if (!location.startsWith(this.base)) throw new Error(`${location} is outside ${this.base}`);
    return join(this.dir, decodeURIComponent(location.slice(this.base.length)));
  }
  read(l: string) {
    return this.local.read(this.path(l));
  }
  readRange(l: string, o: number, n: number) {
    return this.local.readRange(this.path(l), o, n);
  }
  write(l: string, d: Uint8Array) {
    return this.local.write(this.path(l), d);
  }
  writeIfAbsent(l: string, d: Uint8Array) {
    return this.local.writeIfAbsent(this.path(l), d);
  }
  stat(l: string) {
    return this.local.stat(this.path(l));
  }
  exists(l: string) {
    return this.local.exists(this.path(l));
  }
  delete(l: string) {
    return this.local.delete(this.path(l));
  }
  async list(prefix: string) {
    const found = await this.local.list(this.path(prefix));
    return found.map((f) => ({ ...f, location: this.base + f.location.slice(this.dir.length) }));
  }
}

export interface HttpWarehouse {
  url: string;
  dir: string;
  io: FileIO;
  catalog: EmbeddedCatalog;
  /** Requests served, for tests that count reads. */
  requests: number;
  close(): Promise<void>;
}

export async function startHttpWarehouse(): Promise<HttpWarehouse> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-http-'));
  const state = { requests: 0 };
  const server: Server = createServer(async (req, res) => {
    state.requests++;
    const path = normalize(join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (!path.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    let size: number;
    try {
      const s = await stat(path);
      if (!s.isFile()) throw new Error('not a file');
      size = s.size;
    } catch {
      res.writeHead(404).end();
      return;
    }
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      let start = range[1] === '' ? size - Number(range[2]) : Number(range[1]);
      let end = range[1] === '' || range[2] === '' ? size - 1 : Number(range[2]);
      start = Math.max(0, start);
      end = Math.min(end, size - 1);
      res.writeHead(206, {
        'content-range': `bytes ${start}-${end}/${size}`,
        'content-length': end - start + 1,
        'accept-ranges': 'bytes',
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(path, { start, end }).pipe(res);
      return;
    }
    res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(path).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const io = new MappedFileIO(url, dir);
  const warehouse: HttpWarehouse = {
    url,
    dir,
    io,
    catalog: new EmbeddedCatalog({ warehouse: url, io }),
    get requests() {
      return state.requests;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
  return warehouse;
}
