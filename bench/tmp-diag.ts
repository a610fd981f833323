import path from 'node:path';
import { startService } from '../tests/helpers/service.js';
import { prepareTemplate, startTestServer } from '../tests/helpers/postgres.js';
const s = await startTestServer(); await prepareTemplate(s.serverUrl); process.env.TOOLSHED_TEST_SERVER_URL = s.serverUrl;
const svc = await startService({ env: { SANDBOX_POOL_SIZE: '2', LOG_LEVEL: 'warn' } });
await svc.importPackage(`path:${path.resolve('examples/tools/text-tools')}`);
const rows: string[] = [];
for (let i = 0; i < 25; i++) {
  await new Promise((r) => setTimeout(r, 700));
  const t0 = performance.now();
  const res = await svc.request('POST', '/api/tools/execute/@toolshed-examples/text-tools/slugify', { body: { params: { text: 'a b ' + i } } });
  const http = performance.now() - t0;
  const e = await svc.api.deps.db('executions').where({ id: res.body.executionId }).first();
  rows.push(`${http.toFixed(1)} total | queue ${(+e.started_at - +e.created_at)} | run ${(+e.completed_at - +e.started_at)} | sandbox ${e.execution_time_ms}`);
}
console.log(rows.slice(5).join('\n'));
await svc.close(); await s.server?.stop();
process.exit(0);
