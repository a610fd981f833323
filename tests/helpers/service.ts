/**
 * A running Toolshed for a test file: its own database (cloned from the template), the real API on a loopback
 * port, and a real Graphile Worker with the real sandbox. Logs are kept in memory so that tests can inspect them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bootedConfig, loadConfig, type BootedConfig } from '../../core/infra/config.js';
import { createLogger } from '../../core/infra/logger.js';
import { startApi, type ApiHandle } from '../../api/server.js';
import type { WorkerProcess } from '../../worker/main.js';
import { createTestDatabase } from './postgres.js';
import { unmountBelow } from './processes.js';
import { createContractChecker, readRunContract } from './contract.js';
import { textSink } from './text-sink.js';

export const EXAMPLES_DIR = path.resolve(new URL('../../examples/tools', import.meta.url).pathname);
export const FIXTURES_DIR = path.resolve(new URL('../fixtures', import.meta.url).pathname);

export interface Service {
  url: string;
  config: BootedConfig;
  api: ApiHandle;
  worker?: WorkerProcess;
  databaseUrl: string;
  logs: () => string;
  request: (method: string, p: string, opts?: RequestOptions) => Promise<TestResponse>;
  createUser: (opts?: { username?: string; tier?: 'free' | 'pro' | 'enterprise' }) => Promise<{ id: string; username: string; key: string }>;
  importPackage: (source: string, opts?: { official?: boolean }) => Promise<TestResponse>;
  /** Creates a collection as the key's user and adds the given tools (by any reference); throws on a refusal. */
  createCollection: (key: string, body: Record<string, unknown>, toolRefs?: string[]) => Promise<{ id: string; uid: string }>;
  close: () => Promise<void>;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Which sandbox runs the file's tools. A file whose subject is isolation (the sandbox, egress, mounts, hostile
 * packages, MCP servers in the sandbox, killing and rerunning workers) keeps the default, gVisor; a file that tests what
 * a user sees of the registry, search, accounts, scenarios or the web app says `sandbox: 'process'` (the same guest
 * code as a child process, without a gVisor boot per call). `TEST_SANDBOX=gvisor|process` overrides every file's choice.
 */
export type TestSandbox = 'gvisor' | 'process';

export async function startService(
  opts: { env?: Record<string, string | undefined>; worker?: boolean; sandbox?: TestSandbox; database?: { url: string; drop: () => Promise<void> } } = {},
): Promise<Service> {
  const database = opts.database ?? (await createTestDatabase());
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-test-'));
  await fs.chmod(dataDir, 0o755);
  const sink = textSink();
  const config = bootedConfig(
    loadConfig({
      DATA_DIR: dataDir,
      PACKAGE_CACHE_DIR: process.env.TOOLSHED_TEST_CACHE_DIR ?? path.join(dataDir, 'packages'),
      // One gVisor rootfs (and startup snapshot) for the whole run, built by the first file that needs it.
      ...(process.env.TOOLSHED_TEST_ROOTFS_DIR ? { SANDBOX_ROOTFS_DIR: process.env.TOOLSHED_TEST_ROOTFS_DIR } : {}),
      ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
      SECRETS_KEY: crypto.randomBytes(32).toString('hex'),
      SANDBOX: process.env.TEST_SANDBOX || opts.sandbox || 'gvisor',
      SANDBOX_POOL_SIZE: '1',
      // No MCP server is started ahead of its call (each costs a server start of CPU on the 2-core machine); the warm
      // servers have their own tests (mcp-warm.test.ts), and the call path is the same either way.
      SANDBOX_MCP_WARM: '0',
      // No test asks npm for new versions unless it says so (tests/package-versions.test.ts, against a stand-in).
      NPM_POLL_INTERVAL_MINUTES: '0',
      // Nor npm's downloads API (unreachable here): tests/package-downloads.test.ts points it at a stand-in.
      NPM_DOWNLOADS_URL: '',
      WORKER_CONCURRENCY: '2',
      RATE_LIMIT_FREE_MINUTE: '100000',
      RATE_LIMIT_FREE_DAY: '1000000',
      LOG_LEVEL: 'debug',
      // The sentence encoder (on by default for users) loads a 26 MB model in each service: only the tests of the
      // encoder ask for it (env SEARCH_ENCODER: 'use', or undefined for the configuration's default).
      SEARCH_ENCODER: 'none',
      ...opts.env,
    }),
  );
  const logger = createLogger(config.LOG_LEVEL, sink.stream);
  // Loaded only when asked for: API-only test files do not need the sandbox.
  const worker =
    opts.worker === false ? undefined : await (await import('../../worker/main.js')).startWorkerProcess(config, database.url, logger, { cron: false });
  const api = await startApi(config, database.url, logger, 0);

  const request: Service['request'] = async (method, p, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | Buffer | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(api.url + p, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // Every response a test sees must match the service's own OpenAPI document.
    const problem = contract?.(method, p, res.status, res.headers.get('content-type'), parsed);
    if (problem) throw new Error(`contract: ${problem}; body: ${text.slice(0, 500)}`);
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  let contract: ReturnType<typeof createContractChecker> | undefined;
  // Under `npm test` the run's document and validators, made once (the same code's document: openapi.test.ts compares
  // it with what the service serves); a file run by ava alone fetches the service's and compiles as it goes.
  const run = readRunContract();
  if (run) contract = createContractChecker(run.doc, run.validators);
  else {
    const docRes = await request('GET', '/api/openapi.json');
    if (docRes.status === 200) contract = createContractChecker(docRes.body);
  }

  const adminHeaders = { authorization: `Bearer ${config.ADMIN_TOKEN}` };
  return {
    url: api.url,
    config,
    api,
    worker,
    databaseUrl: database.url,
    logs: sink.text,
    request,
    async createUser(u = {}) {
      const username = u.username ?? `user_${crypto.randomBytes(4).toString('hex')}`;
      const res = await request('POST', '/api/admin/users', { headers: adminHeaders, body: { username, tier: u.tier ?? 'free' } });
      if (res.status !== 201) throw new Error(`createUser failed: ${res.status} ${res.text}`);
      return { id: res.body.data.user.id, username, key: res.body.data.apiKey.key };
    },
    importPackage(source, o = {}) {
      return request('POST', '/api/admin/packages', { headers: adminHeaders, body: { source, official: o.official } });
    },
    async createCollection(key, body, toolRefs = []) {
      const res = await request('POST', '/api/collections', { key, body });
      if (res.status !== 201) throw new Error(`create: ${res.text}`);
      for (const toolId of toolRefs) {
        const added = await request('POST', `/api/collections/${res.body.data.uid}/tools`, { key, body: { toolId } });
        if (added.status !== 201) throw new Error(`add ${toolId}: ${added.text}`);
      }
      return res.body.data as { id: string; uid: string };
    },
    async close() {
      await api.close();
      await worker?.close();
      await database.drop();
      unmountBelow(dataDir); // views of worker processes a test killed
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
