/**
 * One writer "process" (a Lambda invocation) whose calls to storage, the catalog, the lock and the S3
 * Tables API pass through fault rules, so a test can kill it at an exact step of a commit, stall it, or
 * lose an answer.
 *
 * A crash is a kill, not an exception the code may clean up after: once a rule crashes the process, every
 * later call of any of its objects fails with the same CrashError (no file is deleted, no lock released,
 * no heartbeat sent), and an answer that arrives for a call in flight is thrown away. What the process
 * wrote before the crash stays where it is, as after a real `kill -9` or a Lambda timeout.
 */
import type { S3TablesClient } from '@aws-sdk/client-s3tables';
import type { Catalog, LoadedTable } from '../../functions/core/catalog/catalog.js';
import { formatIdentifier } from '../../functions/core/catalog/catalog.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import type { CommitLock, LockLease } from '../../functions/core/lock/commit-lock.js';

/** Where a process is when it calls out. */
export type CallSite =
  | { kind: 'io'; method: keyof FileIO; location: string }
  | { kind: 'catalog'; method: 'loadTable' | 'tableExists' | 'createTable' | 'commitTable'; table: string }
  | { kind: 'lock'; method: 'acquire' | 'release'; key: string }
  | { kind: 's3tables'; command: string };

/** The process was killed at `step`; nothing it does afterwards takes effect. */
export class CrashError extends Error {
  constructor(
    readonly step: string,
    readonly site: CallSite,
  ) {
    super(`process crashed at '${step}' (${describeSite(site)})`);
    this.name = 'CrashError';
  }
}

export function describeSite(site: CallSite): string {
  switch (site.kind) {
    case 'io':
      return `io.${site.method}(${site.location})`;
    case 'catalog':
      return `catalog.${site.method}(${site.table})`;
    case 'lock':
      return `lock.${site.method}(${site.key})`;
    case 's3tables':
      return `s3tables.${site.command}`;
  }
}

/** The intercepted call a rule acts on. */
export interface InterceptedCall {
  site: CallSite;
  process: WriterProcess;
  /** The rule's step name. */
  step: string;
  /** Makes the real call (with the caller's abort signal, when it gave one). */
  proceed(): Promise<unknown>;
  /** Makes the real call ignoring the caller's abort signal (a request already on the wire). */
  proceedDetached(): Promise<unknown>;
  /** The caller's abort signal (S3 Tables swaps carry the catalog's commit timeout). */
  signal?: AbortSignal;
}

export interface FaultRule {
  /** Names the step; a crash reports it. */
  step: string;
  matches(site: CallSite): boolean;
  /** The rule fires on the nth matching call (1-based). @default 1 */
  nth?: number;
  act(call: InterceptedCall): Promise<unknown>;
}

/** Kills the process before the call: its effect never happens. */
export const crashBefore = async (call: InterceptedCall): Promise<never> => call.process.crash(call);

/** Lets the call take effect, then kills the process before it sees the answer. */
export const crashAfter = async (call: InterceptedCall): Promise<never> => {
  await call.proceed();
  return call.process.crash(call);
};

/** The call fails with `error()` and never happens (a request refused or lost on the way). */
export function failBefore(error: () => Error) {
  return async (_call: InterceptedCall): Promise<never> => {
    throw error();
  };
}

/** The call takes effect, then its caller gets `error()` (an answer lost or garbled on the way back). */
export function failAfter(error: () => Error) {
  return async (call: InterceptedCall): Promise<never> => {
    await call.proceedDetached();
    throw error();
  };
}

/** Waits for `gate` before making the call (a stalled process: GC pause, frozen sandbox, slow network). */
export function stallBefore(gate: Promise<void>, reached?: (call: InterceptedCall) => void) {
  return async (call: InterceptedCall): Promise<unknown> => {
    reached?.(call);
    await gate;
    return call.proceed();
  };
}

/** Runs `hook` first (e.g. to let a rival commit land), then makes the call. */
export function runBefore(hook: () => Promise<void>) {
  return async (call: InterceptedCall): Promise<unknown> => {
    await hook();
    return call.proceed();
  };
}

/** The error @smithy/node-http-handler rejects with when a request's abort signal fires. */
function abortError(): Error {
  const error = new Error('Request aborted');
  error.name = 'AbortError';
  return error;
}

function whenAborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) throw new Error('this fault needs a call with an abort signal');
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * The request lands, but its answer is lost: the caller's own timeout (its abort signal) fires first.
 * For SDK calls that carry an abort signal (the S3 Tables swap).
 */
export const timeoutAfterLanding = async (call: InterceptedCall): Promise<never> => {
  await call.proceedDetached();
  await whenAborted(call.signal);
  throw abortError();
};

/** The request never arrives; the caller's timeout fires. For SDK calls that carry an abort signal. */
export const timeoutBeforeLanding = async (call: InterceptedCall): Promise<never> => {
  await whenAborted(call.signal);
  throw abortError();
};

/** A request still on the wire when its caller gave up: it arrives when `gate` opens. */
export interface LateDelivery {
  /** Settles with the late request's own outcome once it has been delivered. */
  readonly delivered: Promise<{ ok: true } | { ok: false; error: unknown }>;
  act(call: InterceptedCall): Promise<never>;
}

/**
 * The caller times out (its abort signal, or at once with `timeoutError` for calls without one) while the
 * request is held back; when `gate` opens the request arrives and may still land.
 */
export function deliverLate(gate: Promise<void>, timeoutError?: () => Error): LateDelivery {
  let settle: (outcome: { ok: true } | { ok: false; error: unknown }) => void = () => {};
  const delivered = new Promise<{ ok: true } | { ok: false; error: unknown }>((resolve) => {
    settle = resolve;
  });
  return {
    delivered,
    async act(call: InterceptedCall): Promise<never> {
      void gate
        .then(() => call.proceedDetached())
        .then(
          () => settle({ ok: true }),
          (error: unknown) => settle({ ok: false, error }),
        );
      if (timeoutError) throw timeoutError();
      await whenAborted(call.signal);
      throw abortError();
    },
  };
}

/** Matches S3 Tables API commands by name, e.g. `UpdateTableMetadataLocation`. */
export function s3TablesCommand(name: string): (site: CallSite) => boolean {
  return (site) => site.kind === 's3tables' && site.command === `${name}Command`;
}

/** Matches FileIO calls by method and a test on the location. */
export function ioCall(
  method: keyof FileIO,
  test: (location: string) => boolean,
): (site: CallSite) => boolean {
  return (site) => site.kind === 'io' && site.method === method && test(site.location);
}

interface HeartbeatLease extends LockLease {
  stopHeartbeat?: () => void;
}

/** @see the module comment. */
export class WriterProcess {
  /** Set once the process has been killed. */
  crashed: CrashError | undefined;
  /** Every call the process made, in order (for assertions and failure messages). */
  readonly calls: CallSite[] = [];
  /** Every location the process asked storage to delete (whether or not storage allowed it). */
  readonly deleted: string[] = [];
  private readonly hits = new Map<FaultRule, number>();
  private readonly leases = new Set<HeartbeatLease>();

  constructor(private readonly rules: FaultRule[] = []) {}

  /**
   * Kills the process at the intercepted call: heartbeats stop, every later call fails.
   * @throws CrashError always
   */
  crash(call: Pick<InterceptedCall, 'step' | 'site'>): never {
    this.crashed ??= new CrashError(call.step, call.site);
    for (const lease of this.leases) lease.stopHeartbeat?.();
    throw this.crashed;
  }

  /**
   * Stops the heartbeats of the leases this process holds, as a frozen process (GC pause, suspended
   * sandbox) sends none, while it lives on: its lease lapses and another writer may take the lock.
   */
  freeze(): void {
    for (const lease of this.leases) lease.stopHeartbeat?.();
  }

  /** Counts the call for every rule it matches; the first rule whose count reaches its nth acts on it. */
  private ruleFor(site: CallSite): FaultRule | undefined {
    let firing: FaultRule | undefined;
    for (const rule of this.rules) {
      if (!rule.matches(site)) continue;
      const hit = (this.hits.get(rule) ?? 0) + 1;
      this.hits.set(rule, hit);
      if (firing === undefined && hit === (rule.nth ?? 1)) firing = rule;
    }
    return firing;
  }

  /** How often a rule's matcher has matched so far (to check a step was reached the expected times). */
  hitsOf(step: string): number {
    let total = 0;
    for (const [rule, hits] of this.hits) if (rule.step === step) total += hits;
    return total;
  }

  private async intercept<T>(
    site: CallSite,
    run: (detached: boolean) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (this.crashed) throw this.crashed;
    this.calls.push(site);
    if (site.kind === 'io' && site.method === 'delete') this.deleted.push(site.location);
    const rule = this.ruleFor(site);
    const result = rule
      ? ((await rule.act({
          site,
          process: this,
          step: rule.step,
          signal,
          proceed: () => run(false),
          proceedDetached: () => run(true),
        })) as T)
      : await run(false);
    // Killed while this call was in flight (by a sibling branch): the answer reaches no one.
    if (this.crashed) throw this.crashed;
    return result;
  }

  /** Storage as this process sees it. */
  wrapIO(io: FileIO): FileIO {
    const at = (method: keyof FileIO, location: string): CallSite => ({ kind: 'io', method, location });
    return {
      read: (l) => this.intercept(at('read', l), () => io.read(l)),
      readRange: (l, o, n) => this.intercept(at('readRange', l), () => io.readRange(l, o, n)),
      write: (l, d) => this.intercept(at('write', l), () => io.write(l, d)),
      writeIfAbsent: (l, d) => this.intercept(at('writeIfAbsent', l), () => io.writeIfAbsent(l, d)),
      stat: (l) => this.intercept(at('stat', l), () => io.stat(l)),
      exists: (l) => this.intercept(at('exists', l), () => io.exists(l)),
      delete: (l) => this.intercept(at('delete', l), () => io.delete(l)),
      list: (p) => this.intercept(at('list', p), () => io.list(p)),
    };
  }

  /** A catalog as this process sees it (wrap one built on {@link wrapIO} storage). */
  wrapCatalog(catalog: Catalog): Catalog {
    const at = (method: Extract<CallSite, { kind: 'catalog' }>['method'], id: LoadedTable['identifier']) =>
      ({ kind: 'catalog', method, table: formatIdentifier(id) }) as const;
    return {
      name: catalog.name,
      loadTable: (id) => this.intercept(at('loadTable', id), () => catalog.loadTable(id)),
      tableExists: (id) => this.intercept(at('tableExists', id), () => catalog.tableExists(id)),
      createTable: (id, request) =>
        this.intercept(at('createTable', id), () => catalog.createTable(id, request)),
      commitTable: (id, requirements, updates) =>
        this.intercept(at('commitTable', id), () => catalog.commitTable(id, requirements, updates)),
      listTables: (namespace) => catalog.listTables(namespace),
    };
  }

  /** A commit lock as this process sees it: a dead process never releases, and its heartbeat stops. */
  wrapLock(lock: CommitLock): CommitLock {
    return {
      acquire: async (key, options) => {
        const lease = await this.intercept({ kind: 'lock', method: 'acquire', key }, async () => {
          const held: HeartbeatLease = await lock.acquire(key, options);
          // Known before any rule sees the answer, so a crash right after acquiring stops its heartbeat.
          this.leases.add(held);
          return held;
        });
        return {
          key: lease.key,
          owner: lease.owner,
          fencingVersion: lease.fencingVersion,
          lastCommit: lease.lastCommit,
          release: async (current?: string) => {
            await this.intercept({ kind: 'lock', method: 'release', key }, () => lease.release(current));
            this.leases.delete(lease);
          },
        };
      },
    };
  }

  /** The S3 Tables API as this process sees it; the site names the command (`UpdateTableMetadataLocationCommand`). */
  wrapS3Tables(client: S3TablesClient): S3TablesClient {
    const send = client.send.bind(client) as (command: unknown, options?: unknown) => Promise<unknown>;
    const wrapped = Object.create(client) as S3TablesClient;
    wrapped.send = ((command: { constructor: { name: string } }, options?: { abortSignal?: AbortSignal }) =>
      this.intercept(
        { kind: 's3tables', command: command.constructor.name },
        (detached) => send(command, detached ? { ...options, abortSignal: undefined } : options),
        options?.abortSignal,
      )) as unknown as S3TablesClient['send'];
    return wrapped;
  }
}

/** A promise a test opens when it chooses (to release a stalled or delayed call). */
export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

export function createGate(): Gate {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A promise that settles when `signal()` is first called (to wait until a process reaches a step). */
export function createSignal<T = void>(): { reached: Promise<T>; signal(value: T): void } {
  let signal: (value: T) => void = () => {};
  const reached = new Promise<T>((resolve) => {
    signal = resolve;
  });
  return { reached, signal };
}
