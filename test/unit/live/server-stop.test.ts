/**
 * How `floe serve` stops (server-stop.ts): connections with nothing under way (one that never sent a
 * request, one in the middle of its request's headers) end at once, an answer under way is sent whole
 * with `Connection: close`, and one that never comes is cut after the grace. Node's `server.close()`
 * alone waited for such connections (a minute for the headers, the keep-alive timeout after an answer),
 * and `floe serve` did not exit meanwhile. The catalog is a stand-in whose namespace listing waits
 * until the test lets it go, so the answer is certain to be under way when the stop begins.
 */
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  type RestServer,
  type ServedCatalog,
  startRestServer,
} from '../../../functions/core/live/rest-server.js';

/** What a test whose failure is a hang gives it before it fails (each passes in milliseconds). */
const HANG = 10_000;

/** A catalog with one namespace, whose listing waits for `release`. */
function gatedCatalog() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => undefined;
  const listing = new Promise<void>((resolve) => {
    started = resolve;
  });
  const catalog: ServedCatalog = {
    listNamespaces: async () => {
      started();
      await gate;
      return [['app']];
    },
    namespaceExists: async () => true,
    listTables: async () => [],
    tableExists: async () => false,
    loadTable: async () => {
      throw new Error('no tables here');
    },
  };
  return { catalog, listing, release };
}

/** Resolves when the socket closes, reset or not. */
const closeOf = (socket: Socket) => new Promise((resolve) => socket.once('close', resolve));

const portOf = (server: RestServer) => (server.address() as { port: number }).port;

/** A raw connection, once the server has accepted it (ready in the same poll as the client's connect). */
async function rawConnection(server: RestServer, first?: string): Promise<Socket> {
  const socket = connect(portOf(server), '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  if (first !== undefined) socket.write(first);
  await nextTurn();
  return socket;
}

/** GET /v1/namespaces on a keep-alive connection: status, Connection header, body; or the error. */
function listNamespaces(server: RestServer, agent: Agent) {
  return new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: portOf(server), path: '/v1/namespaces', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('stopping the REST server', () => {
  it(
    'ends at once the connections with no request under way, whole or half sent',
    async () => {
      // Prepare: one connection that never sent a byte, one in the middle of its headers
      const { catalog } = gatedCatalog();
      const server = await startRestServer(catalog, { port: 0, host: '127.0.0.1' });
      const silent = await rawConnection(server);
      const half = await rawConnection(server, 'GET /v1/config HTTP/1.1\r\nHost: x\r\n');
      const ended = Promise.all([closeOf(silent), closeOf(half)]);

      // Act
      await server.stop();

      // Assess: both cut, and the server closed (stop resolved)
      await ended;
      expect(server.listening).toBe(false);
    },
    HANG,
  );

  it(
    'sends an answer under way whole, with Connection: close, then ends its connection',
    async () => {
      // Prepare: a keep-alive request whose answer waits in the catalog
      const { catalog, listing, release } = gatedCatalog();
      const server = await startRestServer(catalog, { port: 0, host: '127.0.0.1' });
      const agent = new Agent({ keepAlive: true });
      const answer = listNamespaces(server, agent);
      await listing;

      // Act: the stop begins while the answer is under way; then the answer comes
      const stopped = server.stop();
      release();

      // Assess: the whole answer, told the connection closes; the stop completes
      const got = await answer;
      expect(got.status).toBe(200);
      expect(got.connection).toBe('close');
      expect(JSON.parse(got.body)).toEqual({ namespaces: [['app']] });
      await stopped;
      expect(server.listening).toBe(false);
      agent.destroy();
    },
    HANG,
  );

  it(
    'cuts an answer that does not come within the grace',
    async () => {
      // Prepare: an answer that never comes
      const { catalog, listing } = gatedCatalog();
      const server = await startRestServer(catalog, { port: 0, host: '127.0.0.1' });
      const agent = new Agent({ keepAlive: true });
      const answer = listNamespaces(server, agent);
      await listing;

      // Act
      await server.stop(20);

      // Assess: the client's request failed (its connection was cut), and the server closed
      await expect(answer).rejects.toThrow(/socket hang up|ECONNRESET/);
      expect(server.listening).toBe(false);
      agent.destroy();
    },
    HANG,
  );
});
