/**
 * Imports an MCP server (core/packages/mcp-server.ts says what is one): starts it in a sandbox with placeholders for
 * its declared variables, as the start-up rules (worker/import/mcp-rules/, run by mcp-startup.ts) choose from what it
 * said and did, lists its tools with the official MCP client (sandbox/mcp-client.ts), and records the package (its
 * launch in the manifest's `mcp`) and one tool per server tool, named as the server names it. A server that cannot
 * start or list is a 400 (a code of mcp-refusals.ts) naming what it wrote to stderr; nothing is recorded then. Every
 * import says which rules fired and why (package_imports.startup).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Manifest, ToolPermissions } from '../../core/packages/manifest.js';
import { binSpeaksMcp, mcpListingOf, placeholderEnv, planMcpServer, serverEntry, type ImportOptions, type McpEnvVar } from '../../core/packages/mcp-server.js';
import type { VersionTool } from '../../core/repos/package-versions.js';
import type { ImportStartup } from '../../core/repos/package-imports.js';
import { scrubHostPaths } from '../../core/text/host-paths.js';
import { NAMED_IN_CODE } from '../../core/packages/discovery.js';
import { packageJsonProblems } from '../../core/packages/npm-rules.js';
import type { InstalledPackage } from '../../sandbox/packages.js';
import { bundleMcpServer } from '../../sandbox/mcp-bundle.js';
import { chooseBundle } from './bundle-choice.js';
import type { DescribeOutcome, DescribedTool, PackageRef } from '../../sandbox/types.js';
import type { WorkerDeps } from '../deps.js';
import { recordVersion } from './record.js';
import type { ImportResult } from './result.js';
import type { McpOffer } from '../../core/packages/mcp-offer.js';
import { namesRead, variablesOf } from '../env-named.js';
import type { Attempt, AttemptRecord } from './mcp-rules/index.js';
import { REFUSAL_MESSAGES, refusalFacts, refusalOf, type McpRefusal, type RefusalFacts } from './mcp-refusals.js';
import { MAX_STARTS, runStartup } from './mcp-startup.js';

type Request = { source: string; official: boolean; options: ImportOptions; publishedBy?: string | null };

export async function importMcpServer(
  deps: WorkerDeps,
  req: Request,
  installed: InstalledPackage,
  /** The text of its bin (binText), as the import read it. */
  text: string | undefined,
): Promise<ImportResult> {
  const pkg = installed.packageJson;
  const problems = packageJsonProblems(pkg);
  const refuse = (
    code: McpRefusal,
    facts: RefusalFacts,
    details: { path: string; message: string }[] | undefined,
    startup?: Omit<ImportStartup, 'refusal'>,
  ) => {
    const message = scrubHostPaths(REFUSAL_MESSAGES[code](facts), installed.dir);
    const result: ImportResult = { ok: false, error: { code: 'VALIDATION_ERROR', message, details: details ?? [{ path: 'source', message }] } };
    return { ...result, startup: { starts: 0, rules: [], ...startup, refusal: code } };
  };
  if (problems.length > 0) return refuse('invalid_package_json', { detail: problems.map((p) => `${p.path}: ${p.message}`).join('; ') }, problems);
  const planned = planMcpServer(pkg, req.options);
  if ('errors' in planned) return refuse('not_runnable', { detail: planned.errors.map((e) => e.message).join('; ') }, planned.errors);
  const plan = planned.plan;
  const describeMs = deps.config.MCP_DESCRIBE_TIMEOUT_MS;
  // What the package's own files say, read once (never run): whether its bin only starts a program it ships, and the
  // variables its code reads (for the rules, and declared on the package at the end).
  const code = {
    launcher: text !== undefined && !binSpeaksMcp(text) && /\bchild_process\b/.test(text),
    envRead: await namesRead(installed.dir),
  };
  const refOf = (a: Attempt): PackageRef => ({
    name: String(pkg.name),
    version: String(pkg.version),
    dir: installed.dir,
    mcp: { bin: plan.bin, args: a.args, inGuest: a.inGuest, ...filesOf(a.env) },
  });
  const describing = (a: Attempt) => ({ timeoutMs: describeMs, env: placeholderEnv(a.env), network: plan.network });
  const started = performance.now();
  // The bundle (sandbox/mcp-bundle.ts) is made, and the server started from it, while it starts from its bin. A
  // server of one file gets none (nothing to save). The bundle is used only when the first start lists and the
  // server started from the bundle lists the very same tools; else the server runs as before (bundle-choice.ts, and
  // the import records which and why). Whatever goes wrong with it, the import goes on with the bin.
  const first: Attempt = { args: plan.args, env: plan.env, inGuest: !code.launcher };
  const bundling = bundleMcpServer(installed.dir, plan.bin)
    .then(async (result) => {
      if (!('file' in result)) return { result };
      const withBundle: PackageRef = { ...refOf(first), mcp: { ...refOf(first).mcp!, bundle: result.file } };
      return { result, withBundle, described: result.inputs < 2 ? undefined : await deps.sandbox.describe(withBundle, describing(first)) };
    })
    .catch(async (err: unknown) => {
      deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'MCP bundle failed; the server runs from its bin');
      return undefined;
    });
  let listed: { tools: DescribedTool[]; attempt: Attempt; offer?: McpOffer } | undefined;
  let firstOutcome: DescribeOutcome | undefined;
  const run = await runStartup({
    planned: { args: plan.args, env: plan.env },
    code,
    // One start is kept for the bundle's.
    budget: MAX_STARTS - 1,
    start: async (a) => {
      const d = await deps.sandbox.describe(refOf(a), describing(a));
      firstOutcome ??= d;
      if (d.kind === 'ok') listed = { tools: d.tools, attempt: a, offer: d.mcpOffer };
      return attemptRecord(a, d);
    },
  });
  let ref = refOf(listed?.attempt ?? first);
  const bundled = await bundling;
  const bundle = bundled && chooseBundle({ bundle: bundled.result, starts: run.starts.length, fromBin: firstOutcome, fromBundle: bundled.described });
  // A bundle not used stays where it is: another import of these bytes may run from it (sandbox/mcp-bundle.ts), and
  // nothing starts from it unless a version's record names it.
  if (bundled?.withBundle && bundle?.used) ref = bundled.withBundle;
  const startup = {
    starts: run.starts.length + (bundled?.described ? 1 : 0),
    rules: run.fired,
    ...(run.spent ? { budgetSpent: true } : {}),
    ...(bundle ? { bundle } : {}),
  };
  const final = run.final;
  if (!listed) {
    // A server that found no network while starting: the answer says why it had none, and what would give it one.
    const offline = !plan.network ? 'not_asked' : deps.config.SANDBOX_NETWORK !== 'egress' ? 'no_egress' : 'had_egress';
    return refuse(refusalOf(final), refusalFacts(final, plan.args, { describeMs, offline }), undefined, startup);
  }
  const { tools } = listed;
  const env: McpEnvVar[] = listed.attempt.env;
  const requestedDefaults = new Map(plan.env.flatMap((v) => (v.default !== undefined ? [[v.name, v.default] as const] : [])));
  if (tools.length === 0) return refuse('lists_no_tools', { detail: '' }, [{ path: 'source', message: 'the MCP server lists no tools' }], startup);
  const args = listed.attempt.args;
  const manifest: Manifest = {
    format: 'mcp',
    name: ref.name,
    version: ref.version,
    description: typeof pkg.description === 'string' ? pkg.description : null,
    category: plan.category,
    env: [
      ...env.map((v) => ({
        name: v.name,
        required: v.required,
        ...(v.secret ? { secret: true } : {}),
        ...(v.description ? { description: v.description } : {}),
        ...(v.file ? { file: true } : {}),
        ...(v.placeholder !== undefined ? { placeholder: v.placeholder } : {}),
        // A setting's default (the import's `env[].default`, server.json's) reaches the server when a caller gives none;
        // the placeholders the start-up rules gave while starting it (an address, a key's stand-in) are not defaults.
        ...(!v.secret && requestedDefaults.has(v.name) ? { default: requestedDefaults.get(v.name) } : {}),
      })),
      // What its code names but it did not ask for while starting (server-github reads its token at the first call).
      ...variablesOf(
        code.envRead,
        env.map((v) => v.name),
      ).map(({ name, secret }) => ({ name, required: false, ...(secret ? { secret: true } : {}), description: NAMED_IN_CODE })),
    ],
    tools: tools.map((t) => ({
      exportName: t.exportName,
      ...(t.description ? { description: t.description.slice(0, 1000) } : {}),
      ...(t.title ? { title: t.title } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
    })),
    mcp: {
      bin: plan.bin,
      args,
      network: plan.network,
      inGuest: ref.mcp?.inGuest === true,
      ...(ref.mcp?.bundle ? { bundle: ref.mcp.bundle } : {}),
      ...filesOf(env),
    },
  };
  const declared = manifest.env.map((v) => v.name);
  const snapshot: VersionTool[] = tools.map((t) => ({
    name: t.exportName,
    exportName: t.exportName,
    description: t.description,
    inputSchema: t.inputSchema,
    outputSchema: t.outputSchema ?? null,
    permissions: permissionsOf(t.annotations, plan.network, declared),
    healthExample: null,
    broken: null,
  }));
  // The server started and listed these tools: that is their health check at import (the whole start-up's time).
  const durationMs = performance.now() - started;
  const checkAtImport = async () => ({ error: null, durationMs });
  const recorded = await recordVersion(
    deps.db,
    {
      manifest,
      source: req.source,
      official: req.official,
      publishedBy: req.publishedBy ?? null,
      installed,
      importError: null,
      snapshot,
      // What the health checks compare the next tools/list with (worker/health.ts checkMcpServer).
      mcpListing: mcpListingOf(tools),
      // Its icons, resources and prompts (sandbox/mcp-client.ts listServerOffer), recorded with the version.
      mcpOffer: listed.offer,
    },
    checkAtImport,
  );
  if (!recorded.ok) return { ...recorded, startup };
  const { packageId, toolIds, latest } = recorded;
  if (!latest) return { ok: true, packageId, toolIds, startup };
  // Its first call should not wait for it to start: one starts now for callers that pass no variables (unless it
  // needs one to start), and more as calls come (sandbox/mcp-warm.ts).
  if (!plan.network && env.every((v) => !v.required)) deps.sandbox.prewarm?.(ref);
  return { ok: true, packageId, toolIds, startup };
}

/** The variables of a launch whose value is a file's content (sandbox/types.ts McpLaunch.files), when there are. */
function filesOf(env: McpEnvVar[]): { files?: string[] } {
  const files = env.filter((v) => v.file).map((v) => v.name);
  return files.length ? { files } : {};
}

/** One start as the rules read it. */
export function attemptRecord(a: Attempt, d: DescribeOutcome): AttemptRecord {
  switch (d.kind) {
    case 'ok':
      return { ...a, outcome: 'listed', tools: d.tools.length };
    case 'load_error': {
      const exit = /exited \(code (\d+)/.exec(d.message);
      return { ...a, outcome: 'exited', message: d.message, ...(d.printed ? { printed: d.printed } : {}), ...(exit ? { exitCode: Number(exit[1]) } : {}) };
    }
    case 'timeout':
      return { ...a, outcome: 'timeout', ...(d.stderr ? { stderr: d.stderr } : {}) };
    case 'sandbox_error':
      return { ...a, outcome: 'sandbox_error', message: d.message };
  }
}

/**
 * MCP annotations as our permissions: readOnlyHint, destructiveHint, idempotentHint; `network` from the import (the
 * server gets egress only when the import allows it); `secrets`: only the declared variables reach the server.
 */
function permissionsOf(annotations: Record<string, unknown> | undefined, network: boolean, secrets: string[]): ToolPermissions {
  const a = annotations ?? {};
  const p: ToolPermissions = { network, secrets };
  if (typeof a.readOnlyHint === 'boolean') p.readOnly = a.readOnlyHint;
  if (typeof a.destructiveHint === 'boolean' && !(p.readOnly && a.destructiveHint)) p.destructive = a.destructiveHint;
  if (typeof a.idempotentHint === 'boolean') p.idempotent = a.idempotentHint;
  return p;
}

/** The first 2 MB of the package's bin (serverEntry), or undefined when it has none or it cannot be read. */
export async function binText(installed: InstalledPackage): Promise<string | undefined> {
  const bin = serverEntry(installed.packageJson);
  if (!bin) return undefined;
  const file = await fs.open(path.join(installed.dir, bin), 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const buf = Buffer.alloc(2 * 1024 * 1024);
    const { bytesRead } = await file.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await file.close();
  }
}
