import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Vitest's default is one worker fewer than the cores: on CI's 2 cores that is 1, and the ~300 unit
 * files ran one after the other on one core. They share nothing (temporary folders, ports 0), so they
 * use both cores there, and the default on larger machines.
 */
const UNIT_WORKERS = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
          maxWorkers: UNIT_WORKERS,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          // moto is one shared server: integration files run one at a time
          fileParallelism: false,
        },
      },
    ],
  },
});
