import { describe, expect, it } from 'vitest';
import { NoSuchTableError } from '../../../functions/core/errors.js';
import { answerRoute, type ServedCatalog } from '../../../functions/core/live/rest-server.js';
import { routeRestRequest } from '../../../functions/core/live/rest-routes.js';
import { newTableMetadata } from '../../../functions/core/spec/metadata.js';

describe('routeRestRequest: the read-only routes of the REST spec', () => {
  it.each([
    ['GET', '/v1/config', '', { kind: 'config' }],
    ['GET', '/v1/namespaces', '', { kind: 'list-namespaces' }],
    ['GET', '/v1/namespaces', '?parent=a%1Fb', { kind: 'list-namespaces', parent: ['a', 'b'] }],
    ['GET', '/v1/namespaces/app', '', { kind: 'namespace', namespace: ['app'], head: false }],
    ['HEAD', '/v1/namespaces/a%1Fb', '', { kind: 'namespace', namespace: ['a', 'b'], head: true }],
    ['GET', '/v1/namespaces/app/tables', '', { kind: 'list-tables', namespace: ['app'] }],
    [
      'GET',
      '/v1/namespaces/app/tables/events',
      '?snapshots=all',
      { kind: 'table', id: { namespace: ['app'], name: 'events' }, head: false },
    ],
    [
      'HEAD',
      '/v1/namespaces/app/tables/events',
      '',
      { kind: 'table', id: { namespace: ['app'], name: 'events' }, head: true },
    ],
  ])('%s %s%s', (method, path, search, expected) => {
    expect(routeRestRequest(method, path, search)).toEqual(expected);
  });

  it.each([
    ['POST', '/v1/namespaces', 'createNamespace'],
    ['DELETE', '/v1/namespaces/app', 'dropNamespace'],
    ['POST', '/v1/namespaces/app/properties', 'updateProperties'],
    ['POST', '/v1/namespaces/app/tables', 'createTable'],
    ['POST', '/v1/namespaces/app/register', 'registerTable'],
    ['POST', '/v1/namespaces/app/tables/events', 'updateTable'],
    ['DELETE', '/v1/namespaces/app/tables/events', 'dropTable'],
    ['POST', '/v1/tables/rename', 'renameTable'],
    ['POST', '/v1/transactions/commit', 'commitTransaction'],
    ['POST', '/v1/namespaces/app/tables/events/metrics', 'reportMetrics'],
  ])('refuses %s %s (%s)', (method, path, operation) => {
    expect(routeRestRequest(method, path)).toEqual({ kind: 'refused', operation });
  });

  it('does not know paths outside /v1', () => {
    expect(routeRestRequest('GET', '/v2/config').kind).toBe('not-found');
  });
});

describe('answerRoute: the spec’s bodies and errors', () => {
  const metadata = newTableMetadata({
    location: '/wh/app/events',
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] },
  });
  const served: ServedCatalog = {
    listNamespaces: async () => [['app']],
    namespaceExists: async (ns) => ns.join('.') === 'app',
    listTables: async (ns) => [{ namespace: ns, name: 'events' }],
    tableExists: async (id) => id.name === 'events',
    loadTable: async (id) => {
      if (id.name !== 'events') throw new NoSuchTableError(`table app.${id.name} does not exist`);
      return { metadataLocation: '/wh/app/events/metadata/v1.metadata.json', metadata };
    },
  };

  it('answers a write with 403 ForbiddenException in the ErrorModel shape', async () => {
    const answer = await answerRoute(served, routeRestRequest('POST', '/v1/namespaces/app/tables/events'));
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body!)).toEqual({
      error: { code: 403, type: 'ForbiddenException', message: expect.stringContaining('updateTable') },
    });
  });

  it('answers load table with a LoadTableResult', async () => {
    const answer = await answerRoute(served, routeRestRequest('GET', '/v1/namespaces/app/tables/events'));
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body!);
    expect(body['metadata-location']).toBe('/wh/app/events/metadata/v1.metadata.json');
    expect(body.metadata['table-uuid']).toBe(metadata['table-uuid']);
    expect(body.config).toEqual({});
  });

  it('answers a missing table with 404 NoSuchTableException, HEAD with a bare 404', async () => {
    const get = await answerRoute(served, routeRestRequest('GET', '/v1/namespaces/app/tables/nope'));
    expect(get.status).toBe(404);
    expect(JSON.parse(get.body!).error.type).toBe('NoSuchTableException');
    expect(await answerRoute(served, routeRestRequest('HEAD', '/v1/namespaces/app/tables/nope'))).toEqual({
      status: 404,
    });
    expect(await answerRoute(served, routeRestRequest('HEAD', '/v1/namespaces/app/tables/events'))).toEqual({
      status: 204,
    });
  });

  it('answers list calls and a missing namespace', async () => {
    const tables = await answerRoute(served, routeRestRequest('GET', '/v1/namespaces/app/tables'));
    expect(JSON.parse(tables.body!)).toEqual({ identifiers: [{ namespace: ['app'], name: 'events' }] });
    const namespaces = await answerRoute(served, routeRestRequest('GET', '/v1/namespaces'));
    expect(JSON.parse(namespaces.body!)).toEqual({ namespaces: [['app']] });
    const missing = await answerRoute(served, routeRestRequest('GET', '/v1/namespaces/other/tables'));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body!).error.type).toBe('NoSuchNamespaceException');
  });
});
