/**
 * Step Functions task handlers for table maintenance (infra/maintenance-definition.ts): each gets the
 * execution's state as its event and returns its step's result; the state machine stores it under the
 * step's key. The work lives in functions/core/maintenance/maintenance-tasks.ts, which `floe maintain`
 * runs too. A thrown LakeError keeps its class name as the Lambda error type, which is what the state
 * machine's Retry (CommitFailedError, TransientIOError, ...) and Catch match on.
 *
 * Configuration: the environment functions/handlers/config.ts reads (FLOE_TABLES may be `[]`: the table
 * comes from the input, `{ "table": "ns.name" }`).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { LakeError } from '../core/errors.js';
import * as tasks from '../core/maintenance/maintenance-tasks.js';
import { type HandlerConfig, loadHandlerConfig } from './config.js';

const logger = new Logger({ serviceName: 'floe-maintenance' });
/** Time kept back so a commit attempt is not started just before Lambda stops the function. */
const SAFETY_MARGIN_MS = 10_000;

type LambdaContext = Pick<Context, 'getRemainingTimeInMillis'>;
type Handler<R> = (event: unknown, context?: LambdaContext) => Promise<R>;

/** The six handlers over a configuration (tests pass their own; Lambda uses the environment's). */
export function createMaintenanceHandlers(
  loadConfig: () => Promise<HandlerConfig> = () => loadHandlerConfig(),
) {
  let config: Promise<HandlerConfig> | undefined;
  const wrap =
    <R>(step: string, task: (ctx: tasks.MaintenanceContext, event: unknown) => Promise<R>): Handler<R> =>
    async (event, context) => {
      config ??= loadConfig().catch((error: unknown) => {
        config = undefined; // a cold start that failed to configure is not cached
        throw error;
      });
      const { catalog, lock } = await config;
      const deadlineMs = context
        ? Date.now() + context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS
        : undefined;
      try {
        const result = await task({ catalog, lock, deadlineMs }, event);
        logger.info(`${step} done`, { result });
        return result;
      } catch (error) {
        const retryable = error instanceof LakeError && error.retryable;
        logger.error(`${step} failed`, { retryable, error: error as Error });
        throw error;
      }
    };
  return {
    planHandler: wrap('plan', tasks.planTask),
    compactHandler: wrap('compact', tasks.compactTask),
    commitHandler: wrap('commit', tasks.commitTask),
    expireHandler: wrap('expire snapshots', tasks.expireTask),
    removeOrphansHandler: wrap('remove orphans', tasks.removeOrphansTask),
    rewriteManifestsHandler: wrap('rewrite manifests', tasks.rewriteManifestsTask),
  };
}

const handlers = createMaintenanceHandlers();
export const planHandler = handlers.planHandler;
export const compactHandler = handlers.compactHandler;
export const commitHandler = handlers.commitHandler;
export const expireHandler = handlers.expireHandler;
export const removeOrphansHandler = handlers.removeOrphansHandler;
export const rewriteManifestsHandler = handlers.rewriteManifestsHandler;
