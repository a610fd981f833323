/**
 * Job (on the crontab, hourly): deletes what is past its retention (RETENTION_*_DAYS) in bounded batches — executions'
 * params and results, scenario runs' transcripts, raw trending events, old trending hours (core/repos/retention.ts).
 */
import type { Task } from 'graphile-worker';
import { parsePayload } from '../../core/infra/jobs.js';
import { sweepRetention } from '../../core/repos/retention.js';
import type { WorkerDeps } from '../deps.js';

export function sweepRetentionTask(deps: WorkerDeps): Task {
  return async (payload) => {
    parsePayload('sweep_retention', payload ?? {});
    const swept = await sweepRetention(deps.db, deps.config);
    if (Object.values(swept).some((n) => n > 0)) deps.logger.info(swept, 'retention sweep');
  };
}
