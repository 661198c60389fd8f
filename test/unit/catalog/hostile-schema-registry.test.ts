/**
 * The schema registry client against a hostile registry (loopback only): huge bodies are refused at the
 * cap, not buffered; a slow-drip body times out; a redirect to another origin is not followed, so the
 * registry's credentials go nowhere else. (Here with the hostile REST suite, whose servers it shares.)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSchemaRegistryClient } from '../../../functions/core/formats/schema-registry-client.js';
import { type Recorder, startRecorder } from '../../support/hostile-rest-server.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';

const BASIC = 'reg-user:hostile-registry-password-77';
let registry: SchemaRegistryServer;
let recorder: Recorder | undefined;
let onClose: (() => Promise<void>) | undefined;

afterEach(async () => {
  await registry.close();
  await recorder?.close();
  recorder = undefined;
  await onClose?.();
  onClose = undefined;
  delete process.env.FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES;
});

async function client(options: { maxResponseBytes?: number; timeoutMs?: number } = {}) {
  registry = await startSchemaRegistryServer({ basicAuth: BASIC });
  const id = registry.register({ schema: '"string"' });
  const c = createSchemaRegistryClient({
    url: registry.url,
    basicAuth: BASIC,
    timeoutMs: options.timeoutMs ?? 2000,
    maxAttempts: 1,
    maxResponseBytes: options.maxResponseBytes,
  });
  return { c, id };
}

describe('a hostile schema registry', () => {
  it('a 1.2 GB answer is refused at the cap, not buffered', async () => {
    // Prepare
    const { c, id } = await client({ maxResponseBytes: 1024 * 1024 });
    registry.hugeNext(1, 1_200_000_000);
    const rssBefore = process.memoryUsage().rss;

    // Act
    const attempt = c.getSchemaById(id);

    // Assess
    await expect(attempt).rejects.toThrow(/larger than the limit of 1048576 bytes/);
    expect(registry.hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it('the cap defaults to 16 MiB and is raised with FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES', async () => {
    // Prepare
    process.env.FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES = '70000';
    const { c, id } = await client();
    registry.hugeNext(1, 100_000);

    // Act + Assess
    await expect(c.getSchemaById(id)).rejects.toThrow(
      /limit of 70000 bytes.*FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES/,
    );
  });

  it('a slow-drip answer times out', async () => {
    // Prepare
    const { c, id } = await client({ timeoutMs: 300 });
    registry.dripNext(1, 50);

    // Act + Assess
    await expect(c.getSchemaById(id)).rejects.toThrow(/did not answer GET \/schemas\/ids\/1 within 300 ms/);
  });

  it('a redirect to another origin is not followed (the Authorization header stays home)', async () => {
    // Prepare: a registry whose every answer is a 307 elsewhere
    recorder = await startRecorder();
    registry = await startSchemaRegistryServer();
    const elsewhere = recorder.uri;
    const redirecting = createServer((req, res) => {
      res.writeHead(307, { location: `${elsewhere}${req.url}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    onClose = () => new Promise<void>((resolve) => redirecting.close(() => resolve()));
    const c = createSchemaRegistryClient({
      url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
      basicAuth: BASIC,
      timeoutMs: 2000,
      maxAttempts: 1,
    });

    // Act
    const attempt = c.getSchemaById(1);

    // Assess
    await expect(attempt).rejects.toThrow(/redirects off the registry's origin are not followed/);
    expect(recorder.requests).toEqual([]);
  });
});
