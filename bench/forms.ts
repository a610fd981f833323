/**
 * `npm run bench:forms`: real JS tool packages from npm (AI SDK, LangChain, Agentic forms; none of them is in this
 * repository), each probed OUTSIDE Toolshed first (installed with plain npm into a folder of its own and imported by
 * a small node script that gets its tools the way its README does), then imported through the real service (embedded
 * Postgres, API, Graphile Worker, gVisor sandboxes) from npm. Figure: the share of the packages with tools outside that
 * import with exactly the outside tool count. Prints one JSON line (per-package lines on stderr).
 * BENCH_FORMS=N tries the first N packages only; BENCH_FORMS_OUTSIDE_ONLY=1 only probes them outside.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startBenchService } from './service.js';

const run = promisify(execFile);
const variable = (name: string) => `\${${name}}`;

/**
 * `outside`: a module body run with the package imported as `m` (and `sub(path)` importing a subpath); it evaluates to
 * the package's tools (a record or an array), obtained as its README says. `body`: what the import request adds.
 */
const PACKAGES: { name: string; version: string; outside: string; body?: Record<string, unknown> }[] = [
  { name: '@parallel-web/ai-sdk-tools', version: '0.2.1', outside: '({ searchTool: m.searchTool, extractTool: m.extractTool })' },
  { name: '@upstash/context7-tools-ai-sdk', version: '0.2.3', outside: '({ resolveLibraryId: m.resolveLibraryId(), queryDocs: m.queryDocs() })' },
  {
    name: '@valyu/ai-sdk',
    version: '1.1.4',
    outside: 'Object.fromEntries(Object.entries(m).filter(([, f]) => typeof f === "function").map(([k, f]) => [k, f()]))',
  },
  { name: 'ai-sdk-tool-code-execution', version: '0.0.2', outside: '({ executeCode: m.executeCode() })' },
  { name: 'bash-tool', version: '1.3.19', outside: '(await m.createBashTool()).tools' },
  { name: '@openassistant/duckdb', version: '0.5.18', outside: '({ localQuery: m.localQuery, mergeTables: m.mergeTables })' },
  {
    name: '@langchain/tavily',
    version: '1.2.0',
    outside:
      '["TavilySearch", "TavilyExtract", "TavilyCrawl", "TavilyMap", "TavilyResearch", "TavilyGetResearch"].map((c) => new m[c]({ tavilyApiKey: "tvly-x" }))',
    body: { env: [{ name: 'TAVILY_API_KEY', secret: true }] },
  },
  {
    name: '@langchain/exa',
    version: '1.0.2',
    outside: '[new m.ExaSearchResults({ client: {} }), new m.ExaFindSimilarResults({ client: {} })]',
  },
  {
    name: '@posthog/agent-toolkit',
    version: '0.2.4',
    outside:
      'await new (await sub("integrations/ai-sdk")).PostHogAgentToolkit({ posthogPersonalApiKey: "phx_x", posthogApiBaseUrl: "https://us.posthog.com" }).getTools()',
    body: {
      entry: './integrations/ai-sdk',
      options: [{ posthogPersonalApiKey: variable('POSTHOG_PERSONAL_API_KEY'), posthogApiBaseUrl: 'https://us.posthog.com' }],
    },
  },
].slice(0, Number(process.env.BENCH_FORMS ?? 100));

/** The package's tool count outside Toolshed, or why there is none. */
async function outsideCount(dir: string, p: (typeof PACKAGES)[number]): Promise<{ tools?: number; error?: string }> {
  const home = path.join(dir, p.name.replace(/[@/]/g, '_'));
  await fs.mkdir(home, { recursive: true });
  await fs.writeFile(path.join(home, 'package.json'), JSON.stringify({ name: 'outside', private: true }));
  try {
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `${p.name}@${p.version}`], { cwd: home, timeout: 300_000 });
  } catch (err) {
    return { error: `npm install: ${String((err as { stderr?: string }).stderr ?? err).slice(0, 200)}` };
  }
  const script = [
    `const m = await import(${JSON.stringify(p.name)});`,
    `const sub = (s) => import(${JSON.stringify(p.name)} + '/' + s);`,
    "process.on('unhandledRejection', () => {});",
    `const tools = await (${p.outside});`,
    'const n = Array.isArray(tools) ? tools.length : Object.keys(tools ?? {}).length;',
    "process.stdout.write(JSON.stringify({ tools: n }) + '\\n');",
    'process.exit(0);',
  ].join('\n');
  await fs.writeFile(path.join(home, 'probe.mjs'), script);
  try {
    const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: home, timeout: 60_000 });
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  } catch (err) {
    return { error: String((err as { stderr?: string }).stderr || err).slice(0, 300) };
  }
}

async function main() {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-forms-'));
  const outside = await Promise.all(PACKAGES.map((p) => outsideCount(scratch, p)));
  if (process.env.BENCH_FORMS_OUTSIDE_ONLY === '1') {
    console.log(JSON.stringify({ bench: 'forms', outside: Object.fromEntries(PACKAGES.map((p, i) => [p.name, outside[i]])) }));
    return;
  }
  const svc = await startBenchService();
  const rows: Record<string, unknown>[] = [];
  try {
    for (const [i, p] of PACKAGES.entries()) {
      const t0 = performance.now();
      const res = await fetch(`${svc.api.url}/api/admin/packages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
        body: JSON.stringify({ source: `npm:${p.name}@${p.version}`, ...(p.body ?? {}) }),
      });
      const body = (await res.json()) as any;
      const row: Record<string, unknown> = { package: `${p.name}@${p.version}`, outside: outside[i].tools ?? null, status: res.status };
      if (outside[i].error) row.outside_error = outside[i].error;
      if (res.status === 201) {
        const tools = body.data.tools as { name: string; healthStatus: string }[];
        row.imported = tools.length;
        row.broken = tools.filter((t) => t.healthStatus === 'BROKEN').length;
        row.empty_schemas = 0;
        for (const t of tools) {
          const one = (await (await fetch(`${svc.api.url}/api/tools/${p.name}/${t.name}`)).json()) as any;
          const schema = one?.data?.inputSchema;
          if (!schema?.properties || Object.keys(schema.properties).length === 0) (row.empty_schemas as number)++;
        }
      } else {
        row.imported = 0;
        row.error = String(body?.error?.message ?? JSON.stringify(body)).slice(0, 300);
      }
      row.import_ms = Math.round(performance.now() - t0);
      row.same_count = typeof row.outside === 'number' && row.outside > 0 && row.imported === row.outside;
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
  } finally {
    await svc.close();
    await fs.rm(scratch, { recursive: true, force: true });
  }
  const withTools = rows.filter((r) => typeof r.outside === 'number' && (r.outside as number) > 0);
  const same = withTools.filter((r) => r.same_count).length;
  console.log(
    JSON.stringify({
      bench: 'forms',
      cpus: os.availableParallelism(),
      tried: rows.length,
      with_tools_outside: withTools.length,
      same_count: same,
      share: withTools.length ? Math.round((100 * same) / withTools.length) / 100 : null,
      packages: rows,
    }),
  );
}

await main();
