/**
 * kafka-cluster.ts reaches into kafkajs's private parts, so it refuses any kafkajs but the one it was
 * written against, at load, naming both versions.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { LakeError } from '../../../functions/core/errors.js';
import { checkKafkajsVersion, KAFKAJS_VERSION } from '../../../functions/core/kafka/kafka-cluster.js';

describe('the kafkajs version kafka-cluster.ts is tied to', () => {
  it('is the version installed and pinned (the module loaded, so its own check passed)', () => {
    // Prepare
    const require = createRequire(import.meta.url);
    const installed = (require('kafkajs/package.json') as { version: string }).version;
    const pinned = (require('../../../package.json') as { dependencies: Record<string, string> }).dependencies
      .kafkajs;

    // Act
    const check = () => checkKafkajsVersion(installed);

    // Assess
    expect(installed).toBe(KAFKAJS_VERSION);
    expect(pinned).toBe(KAFKAJS_VERSION);
    expect(check).not.toThrow();
  });

  it('refuses another kafkajs with a LakeError naming the expected and the found version', () => {
    // Prepare
    const found = '2.3.0';

    // Act
    let thrown: unknown;
    try {
      checkKafkajsVersion(found);
    } catch (error) {
      thrown = error;
    }

    // Assess
    expect(thrown).toBeInstanceOf(LakeError);
    expect((thrown as LakeError).retryable).toBe(false);
    expect((thrown as LakeError).message).toContain(`kafkajs ${found} is installed`);
    expect((thrown as LakeError).message).toContain(`install kafkajs ${KAFKAJS_VERSION}`);
  });

  it('refuses a kafkajs whose version cannot be read', () => {
    // Act + Assess
    expect(() => checkKafkajsVersion(undefined)).toThrow(/kafkajs \(version unknown\) is installed/);
  });
});
