/**
 * What every floe handler shares with the others: one configuration per cold start, the deadline kept
 * back from Lambda's, how an unknown error is classified, and the rule that results must survive
 * `JSON.stringify` (Lambda's Node.js runtime posts `Runtime.JSONStringifyError` instead of a result it
 * cannot serialise: a BigInt anywhere in it fails the invocation after the work was done).
 */
import type { Context } from 'aws-lambda';
import { LakeError } from '../core/errors.js';
import { type HandlerConfig, loadHandlerConfig } from './config.js';

/** Time kept back so no commit attempt starts just before Lambda stops the function. */
const SAFETY_MARGIN_MS = 10_000;

export type RemainingTime = Pick<Context, 'getRemainingTimeInMillis'>;

/**
 * A configuration loaded on first use and kept for the life of the process (a cold start). A load that
 * failed (a secret not reachable yet) is not kept: the next invocation tries again.
 */
export function cacheConfig(
  load: () => Promise<HandlerConfig> = () => loadHandlerConfig(),
): () => Promise<HandlerConfig> {
  let config: Promise<HandlerConfig> | undefined;
  return () => {
    config ??= load().catch((error: unknown) => {
      config = undefined;
      throw error;
    });
    return config;
  };
}

/** The absolute time after which no commit attempt starts, or undefined without a Lambda context. */
export function deadlineOf(context?: RemainingTime): number | undefined {
  return context ? Date.now() + context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS : undefined;
}

/**
 * Whether trying again can help. An error that is not a LakeError (a bug, a library's own error, the
 * network) is assumed transient: failing the batch lets the ESM or the state machine retry it, and a
 * permanent one then shows in the alarms instead of being dropped.
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof LakeError ? error.retryable : true;
}

/**
 * `T` as `JSON.stringify` keeps it: a bigint, function or symbol anywhere inside becomes `never`, so a
 * handler declared `<R extends JsonSafe<R>>` does not compile when its result could carry one.
 */
export type JsonSafe<T> = T extends bigint | symbol | ((...args: never[]) => unknown)
  ? never
  : T extends object
    ? { [K in keyof T]: JsonSafe<T[K]> }
    : T;
