/**
 * Job (on the crontab, hourly): deletes browser sessions past their expiry. An expired session already signs nobody
 * in (findSessionCaller checks expires_at); this only keeps the table from growing with every sign-in.
 */
import type { Task } from 'graphile-worker';
import { deleteExpiredSessions } from '../../core/auth/sessions.js';
import { parsePayload } from '../../core/infra/jobs.js';
import type { WorkerDeps } from '../deps.js';

export function sweepSessionsTask(deps: WorkerDeps): Task {
  return async (payload) => {
    parsePayload('sweep_sessions', payload ?? {});
    const deleted = await deleteExpiredSessions(deps.db);
    if (deleted > 0) deps.logger.info({ deleted }, 'expired sessions deleted');
  };
}
