import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { describeCatalogContract } from '../../contract/catalog-contract.js';

describeCatalogContract('embedded', async () => {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-embedded-contract-'));
  return {
    catalog: new EmbeddedCatalog({ warehouse }),
    cleanup: () => fs.rm(warehouse, { recursive: true, force: true }),
  };
});
