/**
 * Imports an MCP server (core/packages/mcp-server.ts says what is one): starts it in a sandbox with placeholders for
 * its declared variables, lists its tools with the official MCP client (sandbox/mcp-client.ts), and records the
 * package (its launch in the manifest's `mcp`) and one tool per server tool, named as the server names it. A server
 * that cannot start or list is a 400 naming what it wrote to stderr; nothing is recorded then.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Manifest } from '../core/packages/manifest.js';
import {
  binSpeaksMcp,
  mcpListingOf,
  PLACEHOLDER_URL,
  placeholderEnv,
  planMcpServer,
  serverEntry,
  type ImportOptions,
  type McpEnvVar,
} from '../core/packages/mcp-server.js';
import type { VersionTool } from '../core/repos/package-versions.js';
import { recordImport } from './record-version.js';
import { refreshQualityScore } from '../core/repos/tools.js';
import { scrubHostPaths } from '../core/text/host-paths.js';
import type { ToolPermissions } from '../core/packages/manifest.js';
import type { InstalledPackage } from '../sandbox/packages.js';
import type { PackageRef } from '../sandbox/types.js';
import type { WorkerDeps } from './deps.js';
import { recordHealth } from './health.js';
import type { ImportResult } from './import.js';
import { packageJsonProblems } from '../core/packages/npm-rules.js';
import { bundleMcpServer, removeMcpBundle } from '../sandbox/mcp-bundle.js';
import { NETWORK_FAILURE } from './outcomes.js';
import { addressesRead, variablesNamed } from './env-named.js';
import { NAMED_IN_CODE } from '../core/packages/discovery.js';

export async function importMcpServer(
  deps: WorkerDeps,
  req: { source: string; official: boolean; options: ImportOptions; publishedBy?: string | null },
  installed: InstalledPackage,
  /** The text of its bin (binText), as the import read it. */
  text: string | undefined,
): Promise<ImportResult> {
  const pkg = installed.packageJson;
  const problems = packageJsonProblems(pkg);
  if (problems.length > 0) return invalid(`Invalid package.json: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, problems);
  const planned = planMcpServer(pkg, req.options);
  if ('errors' in planned) return invalid(`Not a runnable MCP server: ${planned.errors.map((e) => e.message).join('; ')}`, planned.errors);
  let plan = planned.plan;
  // Every start of the server while it is described: placeholders for its variables, egress if it declared network.
  const describeMs = deps.config.MCP_DESCRIBE_TIMEOUT_MS;
  let describing = { timeoutMs: describeMs, env: placeholderEnv(plan.env), network: plan.network };
  // Run in the guest's own process when the server loads that way (a faster start), else as a child `node <bin>`:
  // after a load error, or a time-out (a server that reads stdin other than through `data` events never hears
  // `initialize` in the guest's process; guest/mcp-pipe.cjs).
  // A bin that only starts a program the package ships (a server written in Go, @digitalocean/mcp) hands that program
  // its stdio: in the guest's process that would be the guest's own, so it starts as a child from the first.
  const launcher = text !== undefined && !binSpeaksMcp(text) && /\bchild_process\b/.test(text);
  let ref: PackageRef = {
    name: String(pkg.name),
    version: String(pkg.version),
    dir: installed.dir,
    mcp: { bin: plan.bin, args: plan.args, inGuest: !launcher },
  };
  const started = performance.now();
  // The bundle (sandbox/mcp-bundle.ts) is made, and the server started from it, while it starts from its bin. A
  // server of one file gets none (nothing to save). The bundle is used only when the server started from it lists
  // the very same tools; else the server runs as before.
  const tryBundle = bundleMcpServer(installed.dir, plan.bin).then(async (bundled) => {
    if (!('file' in bundled)) return undefined;
    const withBundle: PackageRef = { ...ref, mcp: { ...ref.mcp!, bundle: bundled.file } };
    if (bundled.inputs < 2) return { withBundle, described: undefined };
    return {
      withBundle,
      described: await deps.sandbox.describe(withBundle, describing),
    };
  });
  // The bundle is an optimisation: whatever goes wrong with it, the import goes on with the bin.
  const bundling = tryBundle.catch(async (err: unknown) => {
    deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'MCP bundle failed; the server runs from its bin');
    await removeMcpBundle(installed.dir).catch(() => undefined);
    return undefined;
  });
  /** Described in the guest's process (`inGuest`) or as a child `node <bin>`, with the placeholders of the moment. */
  const describeAs = (inGuest: boolean) => {
    ref = { ...ref, mcp: { bin: plan.bin, args: plan.args, inGuest } };
    return deps.sandbox.describe(ref, describing);
  };
  /** Described in the guest's process, else (a load error, a time-out) as a child. */
  const describeEitherWay = async () => {
    const inGuest = await describeAs(true);
    return inGuest.kind === 'load_error' || inGuest.kind === 'timeout' ? describeAs(false) : inGuest;
  };
  let d = await deps.sandbox.describe(ref, describing);
  const bundled = await bundling;
  if (bundled) {
    const b = bundled.described;
    if (d.kind === 'ok' && b?.kind === 'ok' && JSON.stringify(b.tools) === JSON.stringify(d.tools)) ref = bundled.withBundle;
    else await removeMcpBundle(installed.dir);
  }
  if (d.kind === 'load_error' || d.kind === 'timeout') d = await describeAs(false);
  // A command-line program whose server is a subcommand (Speakeasy's generated servers, as @launchdarkly/mcp-server:
  // `mcp start`) prints its usage and exits when started bare: given no arguments, it is started with that subcommand.
  const subcommand = d.kind === 'load_error' && plan.args.length === 0 ? serverSubcommand(d.printed) : undefined;
  if (subcommand) {
    plan = { ...plan, args: subcommand };
    d = await describeEitherWay();
  }
  // A server that serves HTTP unless told otherwise (@modelcontextprotocol/server-pdf, figma-developer-mcp) sits silent
  // on stdio, saying on stderr that it listens: given no arguments, it is started once more, as a child, with `--stdio`.
  // It is kept when it lists its tools or exits naming the variables it wants (figma-developer-mcp: "Either
  // FIGMA_API_KEY or FIGMA_OAUTH_TOKEN is required"); otherwise the first failure is the one reported.
  if (d.kind === 'timeout' && plan.args.length === 0 && SERVES_HTTP.test(d.stderr ?? '')) {
    const before = { plan, d };
    plan = { ...plan, args: ['--stdio'] };
    d = await describeAs(false);
    if (d.kind !== 'ok' && !(d.kind === 'load_error' && undeclaredVariables(d.message, plan.env).length > 0)) ({ plan, d } = before);
  }
  // A server that would not start names the variables it wanted (`AIRTABLE_API_KEY environment variable is required`):
  // those it was not given are declared for it, with a placeholder while it is described, and it is described once
  // more; up to five times, for a server that checks its variables one at a time (@niledatabase/nile-mcp-server:
  // NILE_API_KEY, then NILE_WORKSPACE_SLUG). Callers then pass them per call, as for any declared variable.
  // Once it was given placeholders for either of two ways (`Either CONTENTFUL_MANAGEMENT_ACCESS_TOKEN or PRIVATE_KEY`),
  // what it names next may belong to one way only (`APP_ID is required when using PRIVATE_KEY`): optional.
  let eitherWay = false;
  for (let round = 0; round < 5 && d.kind === 'load_error'; round++) {
    let wanted = undeclaredVariables(d.message, plan.env, eitherWay);
    if (wanted.length > 1 && wanted.every((v) => !v.required)) eitherWay = true;
    // One that wants an address without naming its variable (@tiberriver256/mcp-server-azure-devops: "Organization URL
    // is required") is given the addresses its code reads from the environment (`process.env.AZURE_DEVOPS_ORG_URL`).
    if (wanted.length === 0 && WANTS_ADDRESS.test(d.message)) wanted = await addressesNamed(installed.dir, plan.env);
    // One that wants its key in words (@shortcut/mcp: "A Shortcut api token is required") is given the credentials its
    // code reads (`process.env.SHORTCUT_API_TOKEN`): required when there is one, else optional (either may do).
    if (wanted.length === 0 && WANTS_CREDENTIAL.test(d.message)) wanted = await credentialsNamed(installed.dir, plan.env, d.message);
    if (wanted.length === 0) break;
    plan = { ...plan, env: [...plan.env, ...wanted] };
    describing = { ...describing, env: placeholderEnv(plan.env) };
    d = await describeEitherWay();
  }
  if (d.kind !== 'ok') {
    const why =
      d.kind === 'timeout'
        ? `it did not list its tools within ${describeMs / 1000} s${d.stderr ? `; its last lines on stderr: ${d.stderr}` : ' and wrote nothing to stderr'}`
        : d.message;
    // A server that must reach its vendor to start (@upstash/mcp-server checks its key, @sveltejs/mcp fetches its docs)
    // says `getaddrinfo EAI_AGAIN …`: the answer says why it found no network, and what would give it one.
    const offline =
      d.kind !== 'load_error' || !NETWORK_FAILURE.test(d.message)
        ? ''
        : !plan.network
          ? ' (it was started without network: a server that needs its service while starting imports with `network: true` on a service with SANDBOX_NETWORK=egress)'
          : deps.config.SANDBOX_NETWORK !== 'egress'
            ? ' (it was started without network: this service gives no sandbox network, SANDBOX_NETWORK=none)'
            : '';
    // Arguments the import chose (a subcommand from the server's usage, `--stdio`) are named: the failure is theirs.
    const chosen = plan.args === planned.plan.args ? '' : ` (started with the arguments ${JSON.stringify(plan.args)}, chosen from what it printed)`;
    const message = scrubHostPaths(`The MCP server could not be started and described${chosen}: ${why}${offline}`, installed.dir);
    return invalid(message, [{ path: 'source', message }]);
  }
  if (d.tools.length === 0) return invalid('The MCP server lists no tools', [{ path: 'source', message: 'the MCP server lists no tools' }]);
  const manifest: Manifest = {
    format: 'mcp',
    name: ref.name,
    version: ref.version,
    description: typeof pkg.description === 'string' ? pkg.description : null,
    category: plan.category,
    env: [
      ...plan.env.map((v) => ({
        name: v.name,
        required: v.required,
        ...(v.secret ? { secret: true } : {}),
        ...(v.description ? { description: v.description } : {}),
      })),
      // What its code names but it did not ask for while starting (server-github reads its token at the first call).
      ...(
        await variablesNamed(
          installed.dir,
          plan.env.map((v) => v.name),
        )
      ).map(({ name, secret }) => ({ name, required: false, ...(secret ? { secret: true } : {}), description: NAMED_IN_CODE })),
    ],
    tools: d.tools.map((t) => ({
      exportName: t.exportName,
      ...(t.description ? { description: t.description.slice(0, 1000) } : {}),
      ...(t.title ? { title: t.title } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
    })),
    mcp: { bin: plan.bin, args: plan.args, network: plan.network, inGuest: ref.mcp?.inGuest === true, ...(ref.mcp?.bundle ? { bundle: ref.mcp.bundle } : {}) },
  };
  const declared = manifest.env.map((v) => v.name);
  const snapshot: VersionTool[] = d.tools.map((t) => ({
    name: t.exportName,
    exportName: t.exportName,
    description: t.description,
    inputSchema: t.inputSchema,
    outputSchema: t.outputSchema ?? null,
    permissions: permissionsOf(t.annotations, plan.network, declared),
    healthExample: null,
    broken: null,
  }));
  const recorded = await recordImport(deps.db, {
    manifest,
    source: req.source,
    official: req.official,
    publishedBy: req.publishedBy ?? null,
    installed,
    importError: null,
    snapshot,
    // What the health checks compare the next tools/list with (worker/health.ts checkMcpServer).
    mcpListing: mcpListingOf(d.tools),
  });
  if (!recorded.ok) return recorded;
  const { packageId, toolIds, latest } = recorded;
  if (!latest) return { ok: true, packageId, toolIds };
  // The server started and listed these tools: that is their health check at import.
  const durationMs = performance.now() - started;
  for (const id of toolIds) {
    await recordHealth(deps.db, id, { error: null, durationMs, atImport: true });
    await refreshQualityScore(deps.db, id);
  }
  // Its first call should not wait for it to start: one starts now for callers that pass no variables (unless it
  // needs one to start), and more as calls come (sandbox/mcp-warm.ts).
  if (!plan.network && plan.env.every((v) => !v.required)) deps.sandbox.prewarm?.(ref);
  return { ok: true, packageId, toolIds };
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

function invalid(message: string, details: { path: string; message: string }[]): ImportResult {
  return { ok: false, error: { code: 'VALIDATION_ERROR', message, details } };
}

/**
 * The subcommand that serves MCP on stdio, as arguments, from a usage text a server printed instead of serving: a
 * `start` or `stdio` command in it (`mcp start [--transport stdio|sse] …`, or `start  Run the Model Context Protocol
 * server` under COMMANDS, or commander's `stdio [options]  Start the stdio server`), else a `server start` (@azure/mcp's
 * example `azmcp server start`), else an `mcp` or `serve` command that speaks of an MCP server or service (shadcn's
 * `mcp [options]  MCP server and configuration commands`, @larksuiteoapi/lark-mcp's `mcp [options]  Start Feishu/Lark
 * MCP Service`), else undefined. A `start` or `stdio` line counts in a text
 * that says usage or commands, or when it speaks of a server itself; the others only in a usage text.
 */
export function serverSubcommand(printed: string | undefined): string[] | undefined {
  if (!printed) return undefined;
  const usage = /\busage\b|\bcommands\b/i.test(printed);
  const lines = printed.split('\n');
  // The command (after the program's name, if the line starts with it) and whether the rest of its line agrees.
  const command = (names: string, agrees: (rest: string) => boolean) => {
    const line = new RegExp(`^\\s*(?:[\\w@./-]+\\s+)?(${names})(?:\\s|$)(.*)`, 'i');
    for (const text of lines) {
      const m = line.exec(text);
      if (m && agrees(m[2]!)) return m[1]!.toLowerCase().split(/\s+/);
    }
    return undefined;
  };
  return (
    command('start|stdio', (rest) => usage || /\b(?:server|mcp)\b/i.test(rest)) ??
    (usage
      ? (command('(?:server|mcp)\\s+(?:start|stdio)', () => true) ??
        command('mcp|serve', (rest) => /\bmcp\b.*\bserv(?:er|ice)\b|\bstart\b.*\bmcp\b/i.test(rest)))
      : undefined)
  );
}

/** What a server that listens on HTTP instead of stdio says on stderr (`listening on http://…`, `binding to 0.0.0.0`). */
const SERVES_HTTP = /\bhttps?:\/\/|\blistening\b|\bbinding to\b|--stdio\b/i;

/** A start-up error about a missing address (`Organization URL is required`, `Elasticsearch URL cannot be empty`). */
const WANTS_ADDRESS = /\b(?:URL|URI|endpoint)\b[^.\n]{0,60}\b(?:required|missing|empty|not (?:set|provided|given|configured|defined))\b/i;

/** A start-up error about a missing key in words (`A Shortcut api token is required`, `No API key provided`). */
const WANTS_CREDENTIAL =
  /\b(?:token|api[ _-]?key|key|secret|password|credentials?)\b[^.\n]{0,60}\b(?:required|missing|not (?:set|provided|given|configured|defined|found))\b|\bno (?:api[ _-]?)?(?:token|key|credentials?)\b[^.\n]{0,20}\b(?:provided|given|set|found)\b/i;

/**
 * The credential-like variables the package's code reads and the server was not given, as declarations: those whose
 * words the error says (SHORTCUT_API_TOKEN for "A Shortcut api token is required") if any, else all (at most three).
 */
async function credentialsNamed(dir: string, declared: McpEnvVar[], message: string): Promise<McpEnvVar[]> {
  const read = (
    await variablesNamed(
      dir,
      declared.map((v) => v.name),
    )
  ).filter((v) => v.secret);
  const words = new Set(message.toLowerCase().split(/[^a-z0-9]+/));
  const said = read.filter((v) =>
    v.name
      .toLowerCase()
      .split('_')
      .every((w) => words.has(w)),
  );
  const names = (said.length > 0 ? said : read).slice(0, 3);
  const description = 'read by its code: the server would not start without its key';
  return names.map(({ name }) => ({ name, required: names.length === 1, secret: true, description }));
}

/**
 * The address variables (`…_URL`) the package's code reads and the server was not given (at most three, not a
 * tracer's or a proxy's), with the placeholder while it is described. Optional: which one it wanted is not known (a
 * call without it meets the server's own words).
 */
async function addressesNamed(dir: string, declared: McpEnvVar[]): Promise<McpEnvVar[]> {
  const names = (await addressesRead(dir)).filter((n) => !declared.some((v) => v.name === n) && !/^OTEL_|PROXY/.test(n));
  const description = 'read by its code: the server would not start without an address';
  return names.slice(0, 3).map((name) => ({ name, required: false, description, default: PLACEHOLDER_URL }));
}

/** Names of credentials and addresses (`…_API_KEY`, `…_TOKEN`, `…_SECRET`, `…_PASSWORD`, `…_URL`) a server's start-up error names. */
const WANTED_VARIABLE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PAT|URL)\b/g;
/** Any variable-like name (`UPSTASH_EMAIL`): taken only from an error that speaks of environment variables. */
const ANY_VARIABLE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;
const SPEAKS_OF_ENV = /\benv(?:ironment)?\b/i;
/** A part of a name that makes its value a secret (`LARA_ACCESS_KEY_ID`). */
const SECRET_PART = /(?:^|_)(?:KEY|SECRET|TOKEN|PASSWORD|PAT)(?:_|$)/;
/** A name said to be wanted: `APP_ID is required`, `SPACE_ID must be set`, `TEAM_ID is missing`. */
const SAID_WANTED =
  /\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s+(?:(?:is|are)\s+(?:required|missing|empty|not (?:set|defined|provided|given))|must be\s+(?:set|provided|defined|specified))\b/g;
/** Capitalised names in errors that are not variables: Node's error codes (`ERR_…`, `MODULE_NOT_FOUND`). */
const NOT_A_VARIABLE = /^(?:ERR|NODE|E)_|^MODULE_|_NOT_FOUND$/;

/**
 * The variables a server's start-up error names that are not declared yet (at most five), as declarations: required
 * when it names one or names several together (`Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID`: a call without either
 * cannot work); optional when an "or" stands among them (`GITHUB_TOKEN or GH_TOKEN`: a caller passing either must not
 * be refused; the server says what it misses). All are optional when `optional` (named after an either-or).
 */
export function undeclaredVariables(message: string, declared: McpEnvVar[], optional = false): McpEnvVar[] {
  const known = new Set(declared.map((v) => v.name));
  const credentials = new Set(message.match(WANTED_VARIABLE) ?? []);
  const aboutEnv = SPEAKS_OF_ENV.test(message);
  // A name beside a credential of the same service (`LARA_ACCESS_KEY_ID and LARA_ACCESS_KEY_SECRET must be set`) is one
  // too, and so is a name said to be wanted (`APP_ID is required when using PRIVATE_KEY`).
  const services = new Set([...credentials].map((n) => n.split('_')[0]));
  // Neither is a file's path (BRAVE_API_KEY_FILE beside BRAVE_API_KEY): a placeholder there is a file that does not exist.
  const aPath = (n: string) => /_(?:FILE|FILENAME|PATH|DIR|DIRECTORY)$/.test(n);
  const sibling = (n: string) => services.has(n.split('_')[0]!) && !aPath(n);
  const said = new Set([...message.matchAll(SAID_WANTED)].map((m) => m[1]!).filter((n) => !aPath(n)));
  const named = (message.match(ANY_VARIABLE) ?? []).filter((n) => credentials.has(n) || ((aboutEnv || sibling(n) || said.has(n)) && !NOT_A_VARIABLE.test(n)));
  const names = [...new Set(named)].filter((n) => !known.has(n)).slice(0, 5);
  const at = names.map((n) => new RegExp(`\\b${n}\\b`).exec(message)!.index);
  const among = message.slice(Math.min(...at), Math.max(...at));
  const required = !optional && (names.length === 1 || !/\bor\b|\|/i.test(among));
  const description = 'named by the server when it would not start';
  return names.map((name) =>
    name.endsWith('_URL')
      ? { name, required, description, default: PLACEHOLDER_URL }
      : { name, required, ...(credentials.has(name) || SECRET_PART.test(name) ? { secret: true } : {}), description },
  );
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
