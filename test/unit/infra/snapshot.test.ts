import { describe, expect, it } from 'vitest';
import { synthExample } from './stacks.js';

/** Asset hashes change with every source edit; everything else in the template must not change unseen. */
function maskAssetHashes(template: unknown): unknown {
  return JSON.parse(JSON.stringify(template).replace(/[0-9a-f]{64}/g, '<asset-hash>'));
}

describe('the example stack template', () => {
  it('matches the snapshot (asset hashes masked)', () => {
    // Prepare
    const { template } = synthExample();
    // Act
    const masked = maskAssetHashes(template.toJSON());
    // Assess
    expect(JSON.stringify(masked)).toContain('<asset-hash>.zip');
    expect(JSON.stringify(masked)).not.toMatch(/[0-9a-f]{64}/);
    expect(masked).toMatchSnapshot();
  });
});
