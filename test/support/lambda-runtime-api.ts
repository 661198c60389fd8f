/**
 * A loopback Lambda Runtime API (the HTTP interface Lambda's runtime clients poll, see
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) for running a function under AWS's own
 * runtime interface client (test/support/ric-process.ts). One function process per server:
 *
 * - `GET  /2018-06-01/runtime/invocation/next` long-polls until `invoke(event)` queues an event, then
 *   answers it with the event JSON and the `Lambda-Runtime-*` headers;
 * - `POST /2018-06-01/runtime/invocation/{id}/response` and `.../{id}/error` settle that invocation;
 * - `POST /2018-06-01/runtime/init/error` records why the function could not start and fails every
 *   invocation waiting or to come.
 *
 * What was posted is kept exactly as received (the body parsed as JSON, the error type header), so tests
 * assert on what Lambda itself would have seen.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const BASE = '/2018-06-01/runtime';

/** An error as the runtime client posts it (`errorType`, `errorMessage`, `trace`). */
export interface PostedError {
  errorType: string;
  errorMessage: string;
  trace?: string[];
  /** The `Lambda-Runtime-Function-Error-Type` header, when the client sent one. */
  errorTypeHeader?: string;
}

/** What the function posted for one invocation, with the request id it was given. */
export type InvokeResult = { requestId: string } & (
  | { ok: true; payload: unknown }
  | { ok: false; error: PostedError }
);

export interface InvokeOptions {
  /** The invocation's time limit (sets `Lambda-Runtime-Deadline-Ms`). @default 900000 */
  timeoutMs?: number;
}

interface Pending {
  id: string;
  body: string;
  deadlineMs: number;
  settle: (result: { ok: true; payload: unknown } | { ok: false; error: PostedError }) => void;
}

export class LambdaRuntimeApi {
  /** `host:port`, the value of AWS_LAMBDA_RUNTIME_API. */
  readonly address: string;
  /** Set once the function posted to /runtime/init/error. */
  initError?: PostedError;
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Pending>();
  private readonly polls: ServerResponse[] = [];
  private readonly pollWaiters: (() => void)[] = [];
  private pollCount = 0;

  private constructor(
    private readonly server: Server,
    readonly functionArn: string,
  ) {
    const { port } = server.address() as AddressInfo;
    this.address = `127.0.0.1:${port}`;
  }

  /** Starts a server on a free loopback port. */
  static async start(
    functionArn = 'arn:aws:lambda:us-east-1:111122223333:function:floe-test',
  ): Promise<LambdaRuntimeApi> {
    let api: LambdaRuntimeApi | undefined;
    const server = createServer((req, res) => {
      api?.handle(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
    // keep-alive sockets from the client must not hold close() up
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    api = new LambdaRuntimeApi(server, functionArn);
    return api;
  }

  /** Queues one invocation and waits until the function posts its response or error. */
  invoke(event: unknown, options: InvokeOptions = {}): Promise<InvokeResult> {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    const id = randomUUID();
    return new Promise<InvokeResult>((resolve) => {
      const pending: Pending = {
        id,
        body,
        deadlineMs: Date.now() + (options.timeoutMs ?? 900_000),
        settle: (result) => resolve({ requestId: id, ...result }),
      };
      if (this.initError) return pending.settle({ ok: false, error: this.initError });
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Resolves when the function has polled /next at least `count` times (1: it finished its init). */
  polled(count = 1): Promise<void> {
    if (this.pollCount >= count) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = () => {
        if (this.pollCount >= count) resolve();
        else this.pollWaiters.push(check);
      };
      this.pollWaiters.push(check);
    });
  }

  /** Fails every invocation not settled yet: the function process died, or its init failed. */
  failPending(reason: string | PostedError): void {
    const error: PostedError =
      typeof reason === 'string' ? { errorType: 'Runtime.ExitError', errorMessage: reason } : reason;
    for (const p of [...this.queue.splice(0), ...this.inFlight.values()]) p.settle({ ok: false, error });
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.failPending('runtime API closed');
    for (const res of this.polls.splice(0)) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    if (req.method === 'GET' && url === `${BASE}/invocation/next`) return this.poll(res);
    const body = await readBody(req);
    if (req.method === 'POST' && url === `${BASE}/init/error`) {
      this.initError = postedError(body, req);
      // as Lambda answers an invoke whose init failed: with the init error
      this.failPending(this.initError);
      return void res.writeHead(202).end('{"status":"OK"}');
    }
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    const pending =
      match && req.method === 'POST' ? this.inFlight.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !pending) return void res.writeHead(404).end('{"errorType":"InvalidRequestID"}');
    this.inFlight.delete(pending.id);
    res.writeHead(202).end('{"status":"OK"}');
    if (match[2] === 'response') pending.settle({ ok: true, payload: JSON.parse(body.toString('utf8')) });
    else pending.settle({ ok: false, error: postedError(body, req) });
  }

  private poll(res: ServerResponse): void {
    this.pollCount += 1;
    for (const waiter of this.pollWaiters.splice(0)) waiter();
    this.polls.push(res);
    res.once('close', () => {
      const i = this.polls.indexOf(res);
      if (i >= 0) this.polls.splice(i, 1);
    });
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0 && this.polls.length > 0) {
      const pending = this.queue.shift()!;
      const res = this.polls.shift()!;
      this.inFlight.set(pending.id, pending);
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Lambda-Runtime-Aws-Request-Id': pending.id,
        'Lambda-Runtime-Deadline-Ms': String(pending.deadlineMs),
        'Lambda-Runtime-Invoked-Function-Arn': this.functionArn,
        'Lambda-Runtime-Trace-Id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Sampled=0`,
      });
      res.end(pending.body);
    }
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function postedError(body: Buffer, req: IncomingMessage): PostedError {
  const header = req.headers['lambda-runtime-function-error-type'];
  let parsed: Partial<PostedError> = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as Partial<PostedError>;
  } catch {
    parsed = { errorMessage: body.toString('utf8') };
  }
  return {
    errorType: parsed.errorType ?? 'Unknown',
    errorMessage: parsed.errorMessage ?? '',
    ...(parsed.trace ? { trace: parsed.trace } : {}),
    ...(typeof header === 'string' ? { errorTypeHeader: header } : {}),
  };
}
