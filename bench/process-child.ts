/**
 * One `web` or `worker` process for the benches that run them apart (bench/cluster.ts forks this with
 * `--expose-gc`): boots as the Procfile's entries do (bootProcess on DATABASE_URL, then startApi or
 * startWorkerProcess; cron off so that health checks and sweeps do not run sandboxes mid-measurement) and answers
 * the parent over IPC: `sample` (RSS and heap after a forced GC, CPU time, open SSE streams), `snapshot` (a heap
 * snapshot written to a file), `stop`.
 */
import v8 from 'node:v8';
import { bootProcess } from '../core/infra/bootstrap.js';
import { startApi } from '../api/server.js';
import { streamStats } from '../api/streams/sse.js';
import { startWorkerProcess } from '../worker/main.js';

export interface ChildSample {
  rss_mb: number;
  heap_used_mb: number;
  external_mb: number;
  cpu_s: number;
  sse?: ReturnType<typeof streamStats>;
}

const role = process.argv[2];
if (role !== 'api' && role !== 'worker') throw new Error(`process-child: api or worker, not ${role}`);
const { config, logger, database } = await bootProcess(process.env);
const handle = role === 'api' ? await startApi(config, database.url, logger, 0) : await startWorkerProcess(config, database.url, logger, { cron: false });
const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', async (m: { type: string; id: number; file?: string }) => {
  if (m.type === 'sample') {
    gc?.();
    gc?.();
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const sample: ChildSample = {
      rss_mb: mb(mem.rss),
      heap_used_mb: mb(mem.heapUsed),
      external_mb: mb(mem.external),
      cpu_s: Math.round((cpu.user + cpu.system) / 1e5) / 10,
      ...(role === 'api' ? { sse: streamStats(config) } : {}),
    };
    process.send?.({ type: 'sample', id: m.id, sample });
  } else if (m.type === 'snapshot') {
    gc?.();
    process.send?.({ type: 'snapshot', id: m.id, file: v8.writeHeapSnapshot(m.file) });
  } else if (m.type === 'stop') {
    await handle.close();
    process.send?.({ type: 'stopped', id: m.id });
    process.exit(0);
  }
});
process.send?.({ type: 'ready', url: 'url' in handle ? handle.url : undefined });
