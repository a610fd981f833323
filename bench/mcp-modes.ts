/**
 * `tsx bench/mcp-modes.ts`: what on-demand mode (`?mode=search`) saves and costs. One service in-process (bench/
 * service.ts: embedded Postgres, real worker, gVisor sandboxes), the 13 example packages (63 tools) and a synthetic
 * package of 37 more (bench/synthetic-tools.ts vocabulary; each echoes its input) in one 100-tool collection. Then:
 * the tokens (o200k_base, core/text/tokens.ts) of `tools/list` in both modes, and of a `search_tools` answer; and the
 * offline agent (core/llm/offline*) on scenarios generated for the collection by the offline generator, run over MCP
 * with the SDK's Client in each mode, every tool call a real sandboxed execution, judged by the offline evaluator.
 * Prints one JSON line.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { createOfflineProvider } from '../core/llm/offline/index.js';
import type { LlmToolSpec, ToolCallResult } from '../core/llm/provider.js';
import { countJsonTokens, TOKEN_ENCODING } from '../core/text/tokens.js';
import { post, startBenchService } from './service.js';
import { syntheticTools } from './synthetic-tools.js';

const EXAMPLES = path.resolve(new URL('../examples/tools', import.meta.url).pathname);
const TOOLS = 100;
const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 30);
const SEARCH_QUERIES = ['convert a csv file to json', 'hash a password', 'slug for a blog title', 'parse a cron schedule', 'count words'];

type HealthExample = { params: Record<string, unknown> };

/** A package of `n` tools named from the synthetic vocabulary; each returns what it was given. */
async function writeSyntheticPackage(dir: string, n: number): Promise<{ name: string; tools: string[] }> {
  const docs = syntheticTools(n, 14);
  const name = '@bench/synthetic-tools';
  const tools = docs.map((d) => d.name);
  const code = docs
    .map(
      (d) => `export const ${d.name} = {
  description: ${JSON.stringify(d.description)},
  inputSchema: { type: 'object', properties: { input: { type: 'string', description: 'What to work on' } }, required: ['input'] },
  execute: async ({ input }) => ({ done: ${JSON.stringify(d.name)}, input }),
};`,
    )
    .join('\n');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'index.js'), code);
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name,
      version: '1.0.0',
      type: 'module',
      main: 'index.js',
      toolshed: { category: 'automation', tools: tools.map((exportName) => ({ exportName })) },
    }),
  );
  return { name, tools };
}

async function examplePackages() {
  const out: { dir: string; name: string; tools: { exportName: string; healthExample?: HealthExample }[] }[] = [];
  for (const folder of (await fs.readdir(EXAMPLES)).sort()) {
    const pkg = JSON.parse(await fs.readFile(path.join(EXAMPLES, folder, 'package.json'), 'utf8'));
    out.push({ dir: path.join(EXAMPLES, folder), name: pkg.name, tools: pkg.toolshed.tools });
  }
  return out;
}

function toResult(r: CallToolResult): ToolCallResult {
  const text = (r.content.find((c) => c.type === 'text') as { text: string } | undefined)?.text ?? '';
  const executionTimeMs = Number(r._meta?.['toolshed/executionTimeMs'] ?? 0);
  if (r.isError) return { error: { code: 'TOOL_ERROR', message: text }, executionTimeMs };
  let output: unknown = r.structuredContent;
  if (output === undefined) {
    try {
      output = JSON.parse(text);
    } catch {
      output = text;
    }
  }
  return { output, executionTimeMs };
}

async function connect(url: string) {
  const client = new Client({ name: 'bench-mcp-modes', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const spec = (t: Tool): LlmToolSpec => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema });
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

async function main() {
  const started = performance.now();
  const svc = await startBenchService();
  try {
    const admin = svc.config.ADMIN_TOKEN!;
    const examples = await examplePackages();
    const synthetic = await writeSyntheticPackage(path.join(svc.dir, 'synthetic-tools'), TOOLS - examples.reduce((n, p) => n + p.tools.length, 0));
    for (const dir of [...examples.map((p) => p.dir), path.join(svc.dir, 'synthetic-tools')]) {
      await post(svc.api.url, '/api/admin/packages', { source: `path:${dir}` }, admin);
    }
    const user = (await post(svc.api.url, '/api/admin/users', { username: 'bench_modes' }, admin)).data;
    const key = user.apiKey.key;
    const collection = (
      await post(svc.api.url, '/api/collections', { name: 'Hundred tools', uid: 'hundred-tools', description: 'Every example tool and some more' }, key)
    ).data;
    const refs = [...examples.flatMap((p) => p.tools.map((t) => `${p.name}::${t.exportName}`)), ...synthetic.tools.map((t) => `${synthetic.name}::${t}`)];
    for (const toolId of refs) await post(svc.api.url, `/api/collections/${collection.uid}/tools`, { toolId }, key);
    const endpoint = `${svc.api.url}/api/mcp/bench_modes/${collection.uid}/http`;

    // Token weight of what each mode puts in a model's context up front, and of one search answer.
    const eager = await connect(`${endpoint}?mode=all`);
    const lazy = await connect(`${endpoint}?mode=search`);
    const all = await eager.listTools();
    const meta = await lazy.listTools();
    const searchTokens: number[] = [];
    for (const query of SEARCH_QUERIES) {
      const r = (await lazy.callTool({ name: 'search_tools', arguments: { query } })) as CallToolResult;
      searchTokens.push(countJsonTokens(r.structuredContent));
    }

    // Scenarios for the collection, from the offline generator (stored with the collection, as users would have them).
    const llm = createOfflineProvider();
    const healthExamples = new Map(examples.flatMap((p) => p.tools.map((t) => [t.exportName, t.healthExample ?? null] as const)));
    const generated = await llm.generateScenarios({
      collection: { name: collection.name, description: collection.description },
      tools: all.tools.map((t) => ({ ...spec(t), healthExample: healthExamples.get(t.name) ?? null })),
      count: SCENARIOS,
      avoid: [],
      attempt: 0,
    });
    for (const s of generated) await post(svc.api.url, '/api/scenarios', { collectionId: collection.id, prompt: s.prompt, name: s.name }, key);

    const fullSpecs = all.tools.map(spec);
    const runMode = async (client: Client, tools: Tool[]) => {
      let passed = 0;
      let calls = 0;
      let failedCalls = 0;
      const chosen: string[][] = [];
      const t0 = performance.now();
      for (const s of generated) {
        const agent = await llm.runAgent({
          prompt: s.prompt,
          tools: tools.map(spec),
          maxSteps: 10,
          callTool: async (name, input) => {
            try {
              return toResult((await client.callTool({ name, arguments: input as Record<string, unknown> })) as CallToolResult);
            } catch (err) {
              return { error: { code: 'INVALID_PARAMS', message: (err as Error).message }, executionTimeMs: 0 };
            }
          },
        });
        const verdict = await llm.judge({ prompt: s.prompt, finalText: agent.text, steps: agent.steps, tools: fullSpecs, assertions: null });
        if (verdict.verdict === 'pass') passed++;
        const ran = agent.steps.filter((step) => step.toolName !== 'search_tools');
        calls += ran.length;
        failedCalls += ran.filter((step) => step.result.error).length;
        chosen.push(ran.map((step) => step.toolName));
      }
      return {
        passed,
        passRate: round(passed / generated.length),
        toolCalls: calls,
        failedToolCalls: failedCalls,
        ms: Math.round(performance.now() - t0),
        chosen,
      };
    };
    const allRun = await runMode(eager, all.tools);
    const searchRun = await runMode(lazy, meta.tools);
    const sameTools = allRun.chosen.filter((c, i) => JSON.stringify(c) === JSON.stringify(searchRun.chosen[i])).length;
    await eager.close();
    await lazy.close();

    const { chosen: _a, ...allFigures } = allRun;
    const { chosen: _s, ...searchFigures } = searchRun;
    console.log(
      JSON.stringify({
        bench: 'mcp-modes',
        encoding: TOKEN_ENCODING,
        tools: all.tools.length,
        tokens: {
          toolsListAll: countJsonTokens({ tools: all.tools }),
          toolsListSearch: countJsonTokens({ tools: meta.tools }),
          searchToolsAnswerMean: Math.round(searchTokens.reduce((a, b) => a + b, 0) / searchTokens.length),
        },
        scenarios: generated.length,
        agent: { model: llm.chatModel, all: allFigures, search: searchFigures, sameToolsChosen: sameTools },
        ms: Math.round(performance.now() - started),
      }),
    );
  } finally {
    await svc.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
