/**
 * SEARCH_LEARNING=off: searches and runs by identified callers record nothing, and votes already in the database are
 * not used to rank (docs/search.md, "Learning from use"). API only: the tools are written to Postgres directly.
 */
import test from 'ava';
import { upsertTool } from '../core/repos/packages.js';
import { usageCallerKey } from '../core/repos/search-usage.js';
import { usageTermsOf } from '../core/search/usage.js';
import { until } from './helpers/processes.js';
import { startService } from './helpers/service.js';

const tool = (name: string, description: string) => ({
  name,
  exportName: name,
  description,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  outputSchema: null,
  permissions: null,
  healthExample: null,
  brokenReason: null,
});

test('with SEARCH_LEARNING=off nothing is recorded and past votes do not rank', async (t) => {
  const svc = await startService({ worker: false, env: { SEARCH_LEARNING: 'off', SEARCH_LEARNING_REFRESH_MS: '100' } });
  try {
    const db = svc.api.deps.db;
    const [pkg] = await db('packages')
      .insert({ name: '@demo/weather', version: '1.0.0', category: 'data-processing', source: 'local', install_path: '/tmp/x' })
      .returning('id');
    await upsertTool(db, pkg.id, tool('weatherForecast', 'The weather forecast for a city: rain, wind and temperature.'));
    await upsertTool(db, pkg.id, tool('rainRadar', 'A rain radar image of a region.'));
    const q = 'rain forecast';
    const order = async (key?: string) => {
      const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}`, { key });
      if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
      return (res.body.results.tools as { name: string }[]).map((x) => x.name);
    };
    // The search sync indexes both tools once their NOTIFYs arrive.
    const before = await until(
      async () => {
        const o = await order();
        return o.length === 2 && o;
      },
      30_000,
      'both tools indexed',
    );
    t.deepEqual(before, ['weatherForecast', 'rainRadar']);

    // Votes of five distinct callers for rainRadar, as if recorded while learning was on.
    const radar = (await db('tools').where({ name: 'rainRadar' }).first()).id as string;
    for (let i = 0; i < 5; i++) {
      for (const term of usageTermsOf(q)) await db('search_usage').insert({ term, tool_id: radar, caller: usageCallerKey(`past-${i}`) });
    }
    await svc.api.searchUsage.refresh();
    t.deepEqual(await order(), before);

    const user = await svc.createUser();
    await order(user.key);
    const run = await svc.request('POST', '/api/tools/execute/@demo/weather/rainRadar?wait=false', { key: user.key, body: { params: { text: 'x' } } });
    t.is(run.status, 202, run.text);
    await svc.createCollection(user.key, { name: 'off' }, [radar]);
    t.is((await db('search_last').count('* as n'))[0].n, 0);
    t.is(
      (
        await db('search_usage')
          .where({ caller: usageCallerKey(user.id) })
          .count('* as n')
      )[0].n,
      0,
    );
  } finally {
    await svc.close();
  }
});
