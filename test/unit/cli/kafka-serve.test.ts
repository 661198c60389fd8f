/**
 * `floe kafka-serve`'s flags: a listener reachable from other machines is refused without TLS and
 * client authentication or --insecure (kafka-serve-security.test.ts covers the rest), and malformed boundaries and addresses are usage errors (exit 2)
 * before anything connects.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { tempWarehouse } from '../../support/tables.js';

describe('floe kafka-serve flags', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let err: string[];
  beforeEach(async () => {
    wh = await tempWarehouse();
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await wh.cleanup();
  });

  const args = (...extra: string[]) => [
    'kafka-serve',
    '--warehouse',
    wh.dir,
    '--table',
    'app.events',
    '--bootstrap-servers',
    '127.0.0.1:1',
    '--port',
    '0',
    ...extra,
  ];

  it('refuses a non-loopback --host without --insecure, saying why', async () => {
    // Act
    const code = await main(args('--host', '0.0.0.0'));
    // Assess
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/--host 0\.0\.0\.0 is reachable from other machines .* add --insecure/);
  });

  it('exits 2 for a malformed --cold-below or --bootstrap-servers', async () => {
    // Act
    const badCold = await main(args('--cold-below', '0=10'));
    const coldErr = err.join('');
    err.length = 0;
    const badBootstrap = await main([...args(), '--bootstrap-servers', 'nohost']);
    // Assess
    expect(badCold).toBe(2);
    expect(coldErr).toMatch(/--cold-below: '0=10' is not PARTITION:OFFSET \(or 'committed'\)/);
    expect(badBootstrap).toBe(2);
    expect(err.join('')).toMatch(/--bootstrap-servers takes HOST:PORT/);
  });

  it('exits 2 for a --cache-mb that is not a whole number of MiB', async () => {
    // Act
    const zero = await main(args('--cache-mb', '0'));
    const fraction = await main(args('--cache-mb', '1.5'));
    // Assess
    expect(zero).toBe(2);
    expect(fraction).toBe(2);
    expect(err.join('')).toMatch(/--cache-mb takes a whole number of MiB from 1 to 1048576, got '1\.5'/);
  });
});
