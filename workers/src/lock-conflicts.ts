/**
 * Logs an activity that failed on a deadlock (40P01) or a serialization failure (40001) at warn, with
 * the statement (api/src/kit/lock-conflicts.ts) and the run's ids; the error goes on to Temporal's
 * retry policy unchanged. Without it a deadlock was seen only in PostgreSQL's log.
 */
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { lockConflict } from '@emporia/api/src/kit/lock-conflicts.ts';
import type { Logger } from '@emporia/api/src/kit/logger.ts';

export function lockConflictInterceptor(log: Pick<Logger, 'warn'>): ActivityInterceptorsFactory {
  return (ctx: Context) => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (err) {
          const conflict = lockConflict(err);
          if (conflict) {
            const { activityType: activity, attempt, workflowExecution } = ctx.info;
            log.warn({ err, activity, attempt, workflowId: workflowExecution?.workflowId, sqlState: conflict.sqlState, statement: conflict.statement }, conflict.message);
          }
          throw err;
        }
      },
    },
  });
}
