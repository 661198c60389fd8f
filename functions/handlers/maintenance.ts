/**
 * Step Functions task handlers for table maintenance (infra/maintenance-definition.ts): each gets the
 * execution's state as its event and returns its step's result; the state machine stores it under the
 * step's key and the next task reads it back, so every result is JSON-safe. The work lives in
 * functions/core/maintenance/maintenance-tasks.ts, which `floe maintain` runs too. A thrown LakeError
 * keeps its class name as the Lambda error type, which is what the state machine's Retry
 * (CommitFailedError, TransientIOError, ...) and Catch match on.
 *
 * Configuration: the environment functions/handlers/config.ts reads (FLOE_TABLES may be `[]`: the table
 * comes from the input, `{ "table": "ns.name" }`).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import * as tasks from '../core/maintenance/maintenance-tasks.js';
import type { HandlerConfig } from './config.js';
import { tuneHeapGrowth } from './heap-growth.js';
import { cacheConfig, deadlineOf, isRetryable, type JsonSafe, type RemainingTime } from './lambda-glue.js';

const logger = new Logger({ serviceName: 'floe-maintenance' });
// V8's larger-heap growth (heap-growth.ts): a no-op at the default 3008 MB, whose old space V8 already grows
// 4x; a function given less memory gets the same growth an ingest function does.
tuneHeapGrowth();

type Task<R> = (ctx: tasks.MaintenanceContext, event: unknown) => Promise<R>;
type Handler<R> = (event: unknown, context?: RemainingTime) => Promise<R>;

/** The seven handlers over a configuration (tests pass their own; Lambda uses the environment's). */
export function createMaintenanceHandlers(load?: () => Promise<HandlerConfig>) {
  const config = cacheConfig(load);
  const wrap =
    <R>(step: string, task: Task<R> & Task<JsonSafe<R>>): Handler<R> =>
    async (event, context) => {
      try {
        const { catalog, lock } = await config();
        const result = await task({ catalog, lock, deadlineMs: deadlineOf(context) }, event);
        logger.info(`${step} done`, { result });
        return result;
      } catch (error) {
        logger.error(`${step} failed`, { retryable: isRetryable(error), error: error as Error });
        throw error;
      }
    };
  return {
    convertEqualityDeletesHandler: wrap('convert equality deletes', tasks.convertEqualityDeletesTask),
    planHandler: wrap('plan', tasks.planTask),
    compactHandler: wrap('compact', tasks.compactTask),
    commitHandler: wrap('commit', tasks.commitTask),
    expireHandler: wrap('expire snapshots', tasks.expireTask),
    removeOrphansHandler: wrap('remove orphans', tasks.removeOrphansTask),
    rewriteManifestsHandler: wrap('rewrite manifests', tasks.rewriteManifestsTask),
  };
}

/** As Lambda runs them: the request id on every log line, no key left over from the last invocation. */
const lambda = <R>(h: Handler<R>) => middy(h).use(injectLambdaContext(logger, { resetKeys: true }));
const handlers = createMaintenanceHandlers();
export const convertEqualityDeletesHandler = lambda(handlers.convertEqualityDeletesHandler);
export const planHandler = lambda(handlers.planHandler);
export const compactHandler = lambda(handlers.compactHandler);
export const commitHandler = lambda(handlers.commitHandler);
export const expireHandler = lambda(handlers.expireHandler);
export const removeOrphansHandler = lambda(handlers.removeOrphansHandler);
export const rewriteManifestsHandler = lambda(handlers.rewriteManifestsHandler);
