import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { servedCatalogOf } from '../../../functions/cli/commands/serve.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { LakeError } from '../../../functions/core/errors.js';
import { identifierProblem, MAX_NAME_BYTES } from '../../../functions/core/live/identifiers.js';
import { answerRoute } from '../../../functions/core/live/rest-server.js';
import { routeRestRequest } from '../../../functions/core/live/rest-routes.js';
import {
  asKafkaFailure,
  failureAnswer,
  KafkaUnavailableError,
  RETRY_AFTER_SECONDS,
  redactPaths,
} from '../../../functions/core/live/serve-errors.js';

const TABLE_PATH = '/v1/namespaces/app/tables/';

describe('identifiers floe serve accepts', () => {
  it.each([
    ['a 300-character table name', ['app'], 'x'.repeat(300), `longer than ${MAX_NAME_BYTES} bytes`],
    ['256 bytes of multi-byte characters', ['app'], 'é'.repeat(128), 'longer than'],
    ['a path separator', ['app'], 'a/b', 'path separator'],
    ['a backslash', ['app'], 'a\\b', 'path separator'],
    ['..', ['app'], '..', 'is not a name'],
    ['a namespace level ..', ['..'], 'events', 'is not a name'],
    ['an empty name', ['app'], '', 'cannot be empty'],
    ['a NUL', ['app'], 'ev\u0000ents', 'control character'],
    ['a newline in a namespace', ['a\nb'], 'events', 'control character'],
    ['DEL', ['app'], 'ev\u007f', 'control character'],
    ['too many levels', Array.from({ length: 17 }, () => 'a'), 'events', 'at most 16 levels'],
    [
      'too many bytes in all',
      Array.from({ length: 5 }, () => 'n'.repeat(250)),
      'events',
      'at most 1024 bytes',
    ],
  ])('refuses %s', (_, namespace, name, why) => {
    expect(identifierProblem(namespace, name)).toContain(why);
  });

  it.each([
    [['app'], 'events'],
    [['a', 'b'], 'my-table_2'],
    [['app'], 'x'.repeat(MAX_NAME_BYTES)],
    [['app'], 'événements'],
    [['app'], 'v1.2'],
  ])('accepts %j %s', (namespace, name) => {
    expect(identifierProblem(namespace, name)).toBeUndefined();
  });

  it.each([
    ['a 300-character table name', `${TABLE_PATH}${'x'.repeat(300)}`],
    ['an encoded slash', `${TABLE_PATH}..%2F..%2Fetc`],
    ['an encoded NUL', `${TABLE_PATH}ev%00`],
    ['an encoded ..', `${TABLE_PATH}%2E%2E`],
    ['an empty namespace level', '/v1/namespaces/a%1F%1Fb/tables/events'],
    ['a control character in the namespace', '/v1/namespaces/a%0Ab/tables'],
    ['bad percent-encoding', `${TABLE_PATH}%E0%A4%A`],
  ])('routes %s to 400, before any catalog sees it', async (_, path) => {
    // Prepare
    const warehouse = await mkdtemp(join(tmpdir(), 'floe-serve-ids-'));
    const served = servedCatalogOf(new EmbeddedCatalog({ warehouse }));
    // Act
    const answer = await answerRoute(served, routeRestRequest('GET', path));
    // Assess
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body!);
    expect(body.error).toMatchObject({ code: 400, type: 'BadRequestException' });
    expect(body.error.message).not.toContain(warehouse);
  });

  it('refuses a bad parent namespace in list namespaces', () => {
    expect(routeRestRequest('GET', '/v1/namespaces', `?parent=a%1F${'n'.repeat(300)}`).kind).toBe(
      'bad-request',
    );
  });
});

describe('what a failure is answered with', () => {
  it('answers an unreachable broker (kafkajs gave up retrying) with 503, the ErrorModel and Retry-After', () => {
    // Prepare
    const cause = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9');
    const error = new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 5, retryTime: 100 });
    // Act
    const wrapped = asKafkaFailure(error, 'reading the tail of app.events');
    const answer = failureAnswer(wrapped);
    // Assess
    expect(wrapped).toBeInstanceOf(KafkaUnavailableError);
    expect((wrapped as LakeError).retryable).toBe(true);
    expect(answer.status).toBe(503);
    expect(answer.headers).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    expect(JSON.parse(answer.body!)).toEqual({
      error: {
        code: 503,
        type: 'ServiceUnavailableException',
        message: expect.stringContaining('Kafka did not answer'),
      },
    });
  });

  it('leaves errors that are not about reaching Kafka as they are', () => {
    const denied = Object.assign(new Error('Topic authorization failed'), {
      name: 'KafkaJSProtocolError',
      retriable: false,
    });
    expect(asKafkaFailure(denied, 'x')).toBe(denied);
    const lake = new LakeError('timeout', { retryable: true });
    expect(asKafkaFailure(lake, 'x')).toBe(lake);
  });

  it('answers a missing table with 404 and the warehouse path taken out', async () => {
    // Prepare
    const warehouse = await mkdtemp(join(tmpdir(), 'floe-serve-404-'));
    const served = servedCatalogOf(new EmbeddedCatalog({ warehouse }));
    // Act: a name no filesystem takes, reaching the catalog without routing
    const answer = await answerRoute(served, {
      kind: 'table',
      id: { namespace: ['app'], name: 'x'.repeat(300) },
      head: false,
    });
    // Assess
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain(warehouse);
    expect(JSON.parse(answer.body!).error.message).toContain('<path>');
  });

  it('answers an unexpected error with 500 and no path, the detail going to the log', async () => {
    // Prepare: a catalog whose read fails as a filesystem fails on a name too long
    const warehouse = await mkdtemp(join(tmpdir(), 'floe-serve-500-'));
    const served = {
      ...servedCatalogOf(new EmbeddedCatalog({ warehouse })),
      loadTable: async () => {
        await readFile(join(warehouse, 'x'.repeat(300)));
        throw new Error('unreachable: the read above fails');
      },
    };
    const logged: unknown[] = [];
    // Act
    const answer = await answerRoute(served, routeRestRequest('GET', `${TABLE_PATH}events`), (error) =>
      logged.push(error),
    );
    // Assess
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain(warehouse);
    expect(JSON.parse(answer.body!).error).toMatchObject({ code: 500, type: 'InternalServerError' });
    expect(String(logged[0])).toContain('ENAMETOOLONG');
  });

  it('takes absolute paths out of messages it passes on', () => {
    expect(
      redactPaths("ENOENT: no such file or directory, open '/work/wh/app/events/metadata/v1.metadata.json'"),
    ).toBe("ENOENT: no such file or directory, open '<path>'");
    expect(redactPaths('reading file:///tmp/x/y.parquet failed')).toBe('reading <path> failed');
    expect(redactPaths('table app.events at 3/4 partitions')).toBe('table app.events at 3/4 partitions');
  });

  it('answers a retryable error whose message holds a path with 503 and without the path', () => {
    const answer = failureAnswer(
      new LakeError("slow down writing '/srv/wh/a/b.parquet'", { retryable: true }),
    );
    expect(answer.status).toBe(503);
    expect(answer.body).not.toContain('/srv/wh');
  });
});
