/**
 * How `floe serve` stops: the answers under way are finished, then every connection ends, so the
 * process exits as soon as they are sent. Node's `server.close()` alone waits for every connection to
 * close on its own, and closes only those idle after a request: a client that connected and has not
 * sent a request yet (an engine's connection pool, a health check, a TLS handshake under way) or that
 * sent half of one held the stop for the header timeout (a minute), and a keep-alive connection whose
 * request was in flight for the keep-alive timeout after its answer. Written here because Node offers
 * only "destroy idle ones" and "destroy all" (which would cut answers under way short).
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a stop waits for the answers under way before it cuts every connection. */
export const STOP_GRACE_MS = 10_000;

/** Stops a server that {@link trackConnections} watches. */
export type StopServer = (graceMs?: number) => Promise<void>;

/**
 * Watches `server`'s connections and requests from now on (call it before the server listens).
 * @returns the stop: no new connection; the answers under way are finished, each with
 *   `Connection: close`; once they are sent, every other connection (idle, before or in the middle of
 *   a request, in a TLS handshake) is cut; past `graceMs` everything is. Resolves once the server
 *   closed. Never throws.
 */
export function trackConnections(server: Server): StopServer {
  /** Every TCP connection (a TLS one from before its handshake). */
  const sockets = new Set<Socket>();
  /** Answers under way, with the connection each goes out on. */
  const answers = new Map<ServerResponse, Socket>();
  let stopping = false;
  let answered: () => void = () => undefined;

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req, res: ServerResponse) => {
    if (stopping) res.shouldKeepAlive = false;
    answers.set(res, req.socket);
    res.once('close', () => {
      answers.delete(res);
      if (stopping && answers.size === 0) answered();
    });
  });

  return async (graceMs = STOP_GRACE_MS) => {
    stopping = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // Node ends a connection not kept alive once its answer is sent (flushed, TLS included).
    const carriers = new Set<Socket>();
    for (const [res, socket] of answers) {
      res.shouldKeepAlive = false;
      carriers.add(socket);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    const allAnswered = new Promise<void>((resolve) => {
      answered = resolve;
      if (answers.size === 0) resolve();
    });
    await Promise.race([allAnswered, late]);
    const carried = [...carriers]
      .filter((s) => !s.destroyed)
      .map((s) => new Promise((resolve) => s.once('close', resolve)));
    await Promise.race([Promise.all(carried), late]);
    // Nothing left under way: the rest are idle, or have not finished a request they started.
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    clearTimeout(timer);
    await closed;
  };
}
