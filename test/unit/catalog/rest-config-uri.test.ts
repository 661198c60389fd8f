/**
 * A `GET /v1/config` whose `uri` (defaults or overrides) is not an http(s) URL: every later request would
 * be built on it, so the config is refused with a LakeError naming the property, never a bare TypeError
 * from `new URL` on the first request after it.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { LakeError } from '../../../functions/core/errors.js';
import { RestCatalogServer } from '../../support/rest-catalog-server.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function startCatalog(configOverrides: Record<string, string>): Promise<RestCatalogServer> {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-config-uri-'));
  const server = await RestCatalogServer.start({ warehouse, configOverrides });
  cleanups.push(async () => {
    await server.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  return server;
}

describe("the config's uri", () => {
  it.each(['catalog.example.com/api', 'file:///etc/passwd', ' '])(
    "refuses an override '%s' that is not an http(s) URL, naming it",
    async (uri) => {
      // Prepare
      const server = await startCatalog({ uri });
      const catalog = new RestCatalog({ uri: server.uri });
      // Act
      const attempt = catalog.listTables(['db']);
      // Assess
      await expect(attempt).rejects.toBeInstanceOf(LakeError);
      await expect(attempt).rejects.toThrow(/GET \/v1\/config.*uri.*http\(s\) URL/);
    },
  );
});
