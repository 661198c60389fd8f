/**
 * The catalog contract against the in-process REST server. These run as unit tests: the server is
 * node:http on 127.0.0.1 in this process, so nothing leaves the machine and no external service is needed.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { describeCatalogContract } from '../../contract/catalog-contract.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../support/rest-catalog-server.js';

async function startServer(options: Omit<RestCatalogServerOptions, 'warehouse'> = {}) {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-contract-'));
  const server = await RestCatalogServer.start({ warehouse, ...options });
  return { warehouse, server };
}

describeCatalogContract('rest (plain)', async () => {
  const { warehouse, server } = await startServer();
  return {
    catalog: new RestCatalog({ uri: server.uri }),
    cleanup: async () => {
      await server.close();
      await fs.rm(warehouse, { recursive: true, force: true });
    },
  };
});

describeCatalogContract(
  'rest (prefix, OAuth2, idempotency keys, multi-level namespace)',
  async () => {
    const { warehouse, server } = await startServer({
      prefix: 'floe-wh',
      oauth: { clientId: 'floe', clientSecret: 's3cret' },
      idempotency: true,
    });
    return {
      catalog: new RestCatalog({ uri: server.uri, credential: 'floe:s3cret', warehouse: 'wh' }),
      cleanup: async () => {
        await server.close();
        await fs.rm(warehouse, { recursive: true, force: true });
      },
    };
  },
  { namespace: ['analytics', 'raw events'] },
);
