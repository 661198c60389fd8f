/**
 * A missing warehouse folder: commands that read refuse it, naming it, instead of showing an empty
 * catalog; commands that write say it is created with the first table (functions/cli/warehouse-check.ts,
 * functions/core/catalog/warehouse-folder.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { checkWarehouseArgs, warehouseOf } from '../../../functions/cli/warehouse-check.js';
import { WarehouseNotFoundError } from '../../../functions/core/catalog/warehouse-folder.js';
import { ValidationError } from '../../../functions/core/errors.js';

describe('the warehouse folder', () => {
  let dir: string;
  let err: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-wh-'));
    err = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['scan', 'inspect', 'serve', 'maintain'])(
    '%s refuses a folder that is not there, naming it',
    async (command) => {
      // Prepare
      const missing = join(dir, 'typo');
      const args =
        command === 'maintain'
          ? ['maintain', 'all']
          : command === 'serve'
            ? ['serve', '--port', '0']
            : [command];

      // Act
      const code = await main([...args, '--warehouse', missing, '--table', 'a.b']);

      // Assess: exit 1, the folder named, nothing created
      expect(code).toBe(1);
      expect(err.join('')).toContain(
        `floe: the warehouse folder ${missing} does not exist: check --warehouse`,
      );
      expect(existsSync(missing)).toBe(false);
    },
  );

  it('a bad flag is still a usage error first', async () => {
    expect(await main(['scan', '--warehouse', join(dir, 'typo'), '--table', 'a.b', '--port', '1'])).toBe(2);
  });

  it('a command that writes says it will be created, and creates nothing before it writes', async () => {
    // Prepare
    const missing = join(dir, 'new', 'wh');
    const said: string[] = [];

    // Act
    await checkWarehouseArgs('ingest', ['e.json', `--warehouse=${missing}`], {}, (line) => said.push(line));
    await checkWarehouseArgs('ingest', ['e.json', `--warehouse=${missing}`], {}, (line) => said.push(line));

    // Assess
    expect(existsSync(missing)).toBe(false);
    expect(said).toEqual([
      `floe: the warehouse folder ${missing} does not exist yet: it is created with the first table`,
      `floe: the warehouse folder ${missing} does not exist yet: it is created with the first table`,
    ]);
  });

  it('reads FLOE_WAREHOUSE unless another catalog is chosen; a file is not a warehouse', async () => {
    // Prepare
    const file = join(dir, 'file');
    await writeFile(file, 'x');

    // Act / Assess
    expect(warehouseOf('scan', [], { FLOE_WAREHOUSE: '/w' })).toBe('/w');
    expect(warehouseOf('scan', ['--uri', 'http://x'], { FLOE_WAREHOUSE: '/w' })).toBeUndefined();
    expect(warehouseOf('scan', ['--warehouse', '/w', '--uri', 'http://x'], {})).toBeUndefined();
    expect(warehouseOf('scan', [], { FLOE_WAREHOUSE: '/w', FLOE_CATALOG: 's3tables' })).toBeUndefined();
    expect(warehouseOf('demo', [], {})).toBe('warehouse');
    await expect(checkWarehouseArgs('scan', [], { FLOE_WAREHOUSE: join(dir, 'gone') })).rejects.toThrow(
      WarehouseNotFoundError,
    );
    await expect(checkWarehouseArgs('scan', ['--warehouse', file], {})).rejects.toThrow(ValidationError);
    await expect(
      checkWarehouseArgs('scan', ['--warehouse', 's3://bucket/none'], {}),
    ).resolves.toBeUndefined();
  });
});
