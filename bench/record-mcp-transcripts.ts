/**
 * `tsx bench/record-mcp-transcripts.ts [name…]`: records MCP servers' start-up transcripts for
 * tests/mcp-transcripts.test.ts. Each server is installed as an import installs it and started in a real gVisor
 * sandbox by the import's own driver (worker/import/mcp-startup.ts, the same rules and budget): every start's
 * arguments, variables given, where it ran, and what it said and did (stderr, stdout, exit code, tools listed) go to
 * tests/fixtures/mcp-transcripts/<name>.json with the rules that fired. The servers: the fixture server's modes that
 * imitate real packages (tests/fixtures/mcp-servers/server.cjs) and the real servers pinned as devDependencies.
 * Needs runsc (SANDBOX=gvisor); run it again when a rule changes on purpose, and read the diff.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { planMcpServer, placeholderEnv, binSpeaksMcp } from '../core/packages/mcp-server.js';
import { parseSource } from '../core/packages/source.js';
import { installPackage } from '../sandbox/packages.js';
import { createGvisorRunner } from '../sandbox/gvisor-runner.js';
import { namesRead } from '../worker/env-named.js';
import { attemptRecord, binText } from '../worker/import/mcp.js';
import { MAX_STARTS, runStartup } from '../worker/import/mcp-startup.js';
import { refusalOf } from '../worker/import/mcp-refusals.js';
import { mcpFixturePackage } from '../tests/helpers/mcp-fixture.js';

const ROOT = path.resolve(new URL('..', import.meta.url).pathname);
const OUT = path.join(ROOT, 'tests/fixtures/mcp-transcripts');
const MODULES = path.join(ROOT, 'node_modules');

/** What each transcript is of: a fixture mode (and the real package it imitates), or a real server. */
const SERVERS: {
  name: string;
  imitates?: string;
  fixture?: { mode: string; bare?: boolean; launched?: boolean; keyFile?: boolean };
  source?: string;
  args?: string[];
}[] = [
  { name: 'needs-key', imitates: 'airtable-mcp-server', fixture: { mode: 'needs-key' } },
  { name: 'needs-two', imitates: '@niledatabase/nile-mcp-server', fixture: { mode: 'needs-two' } },
  { name: 'needs-address', imitates: '@tiberriver256/mcp-server-azure-devops', fixture: { mode: 'needs-address' } },
  { name: 'either-way', imitates: '@ivotoby/contentful-management-mcp-server', fixture: { mode: 'either-way' } },
  { name: 'key-in-words', imitates: '@shortcut/mcp', fixture: { mode: 'key-in-words', keyFile: true } },
  { name: 'cli', imitates: '@launchdarkly/mcp-server', fixture: { mode: 'cli', bare: true } },
  { name: 'cli-stderr', imitates: '@pipedream/mcp', fixture: { mode: 'cli-stderr', bare: true } },
  { name: 'cli-fails', fixture: { mode: 'cli-fails', bare: true } },
  { name: 'http-first', imitates: 'figma-developer-mcp', fixture: { mode: 'http-first', bare: true } },
  { name: 'launched', imitates: '@digitalocean/mcp', fixture: { mode: 'good', launched: true } },
  { name: 'readable', fixture: { mode: 'readable' } },
  { name: 'prints', fixture: { mode: 'prints' } },
  { name: 'crashes', fixture: { mode: 'crashes' } },
  { name: 'usage-error', imitates: 'kubernetes-mcp-server', fixture: { mode: 'usage-error' } },
  { name: 'killed', imitates: 'n8n-mcp', fixture: { mode: 'killed' } },
  { name: 'bad-config', imitates: '@elastic/mcp-server-elasticsearch', fixture: { mode: 'bad-config' } },
  { name: 'needs-network', imitates: '@upstash/mcp-server', fixture: { mode: 'needs-network' } },
  // The real packages the modes above imitate, from npm (the version recorded is the one npm gave).
  { name: 'real-airtable-mcp-server', source: 'npm:airtable-mcp-server' },
  { name: 'real-shortcut-mcp', source: 'npm:@shortcut/mcp' },
  { name: 'real-figma-developer-mcp', source: 'npm:figma-developer-mcp' },
  { name: 'real-nile-mcp-server', source: 'npm:@niledatabase/nile-mcp-server' },
  { name: 'real-launchdarkly-mcp-server', source: 'npm:@launchdarkly/mcp-server' },
  { name: 'real-azure-devops-mcp', source: 'npm:@tiberriver256/mcp-server-azure-devops' },
  { name: 'server-everything', source: `path:${path.join(MODULES, '@modelcontextprotocol/server-everything')}` },
  { name: 'server-memory', source: `path:${path.join(MODULES, '@modelcontextprotocol/server-memory')}` },
];

async function main() {
  const only = process.argv.slice(2);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
  const runner = createGvisorRunner({
    poolSize: 0,
    network: 'none',
    packageCacheDir: path.join(dir, 'cache'),
    stateDir: path.join(dir, 'state'),
    mcpWarm: { maxServers: 0 },
  });
  await fs.mkdir(OUT, { recursive: true });
  try {
    for (const s of SERVERS.filter((x) => only.length === 0 || only.includes(x.name))) {
      let source = s.source;
      if (s.fixture) {
        const pkgDir = await mcpFixturePackage(path.join(dir, 'fixtures'), s.fixture.mode, s.fixture);
        // As tests/mcp-hostile.test.ts gives key-in-words a file that reads its key by name.
        if (s.fixture.keyFile) await fs.writeFile(path.join(pkgDir, 'token.cjs'), 'module.exports = () => process.env.FIXTURE_SERVICE_TOKEN;\n');
        source = `path:${pkgDir}`;
      }
      const parsed = parseSource(source!);
      if ('error' in parsed) throw new Error(parsed.error);
      const installed = await installPackage(path.join(dir, 'cache'), parsed);
      const args = s.args ?? (s.fixture && !s.fixture.bare && !s.fixture.launched ? [s.fixture.mode] : undefined);
      const planned = planMcpServer(installed.packageJson, { kind: 'mcp', ...(args ? { args } : {}) });
      if ('errors' in planned) throw new Error(JSON.stringify(planned.errors));
      const plan = planned.plan;
      const text = await binText(installed);
      const code = { launcher: text !== undefined && !binSpeaksMcp(text) && /\bchild_process\b/.test(text), envRead: await namesRead(installed.dir) };
      const run = await runStartup({
        planned: { args: plan.args, env: plan.env },
        code,
        budget: MAX_STARTS - 1,
        start: async (a) => {
          const ref = {
            name: String(installed.packageJson.name),
            version: String(installed.packageJson.version),
            dir: installed.dir,
            mcp: { bin: plan.bin, args: a.args, inGuest: a.inGuest },
          };
          const d = await runner.describe(ref, { timeoutMs: 20_000, env: placeholderEnv(a.env) });
          return attemptRecord(a, d);
        },
      });
      // Host paths (the cache, the temporary folder) never enter a transcript.
      const scrub = (text: string) => text.split(installed.dir).join('/pkg').split(dir).join('/tmp/x');
      const transcript = {
        server: `${String(installed.packageJson.name)}@${String(installed.packageJson.version)}`,
        ...(s.imitates ? { imitates: s.imitates } : {}),
        recorded: 'bench/record-mcp-transcripts.ts, gVisor, no network',
        planned: { args: plan.args, env: plan.env },
        code,
        starts: run.starts.map((r) => JSON.parse(scrub(JSON.stringify({ ...r, env: r.env.map((v) => v.name) })))),
        expect: {
          rules: run.fired.map((f) => f.rule),
          outcome: run.final.outcome,
          ...(run.final.outcome === 'listed' ? {} : { refusal: refusalOf(run.final) }),
          declared: run.fired.flatMap((f) => f.declared ?? []),
        },
      };
      await fs.writeFile(path.join(OUT, `${s.name}.json`), `${JSON.stringify(transcript, null, 2)}\n`);
      process.stderr.write(`${s.name}: ${run.starts.length} starts, ${transcript.expect.rules.join(', ') || 'no rule'} → ${run.final.outcome}\n`);
    }
  } finally {
    await runner.close();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
