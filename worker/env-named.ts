/**
 * Credential-like variables a package's own code names (`process.env.FIRECRAWL_API_KEY`,
 * `process.env["PARALLEL_API_KEY"]`). Many packages read their key only when a tool runs (firecrawl-aisdk,
 * @parallel-web/ai-sdk-tools, @modelcontextprotocol/server-github), so an import that only loads them never sees it
 * read, and callers would not learn which key to pass. The files are read as text, never run; the package's
 * dependencies (its node_modules) are not read.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** Names that hold a credential or a service's address: one definition, the guest's too (core/packages/env-names.ts). */
import { ADDRESS, CREDENTIAL } from '../core/packages/env-names.js';
export { ADDRESS, CREDENTIAL };
const NAMED = /process\.env(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*(['"`])([A-Z][A-Z0-9_]*)\2\s*\])/g;
/** Names a bundled library reads for itself, not the package's credential (dotenv's decryption key). */
const NOT_THE_PACKAGES = new Set(['DOTENV_KEY']);
const MAX_ENTRIES = 5000;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
const MAX_NAMES = 8;
/** How many distinct names are read at most (the first met). */
const MAX_READ = 256;

/** A variable the package's code names: a credential (a secret), or a setting of the same service. */
export interface NamedVariable {
  name: string;
  secret: boolean;
}

/**
 * What callers may need to pass, from the names the package's own files read: credential-like names (secrets) first,
 * then settings of the same service as one of them or as a `known` variable (`AZURE_DEVOPS_AUTH_METHOD` beside
 * `AZURE_DEVOPS_PAT`, `ES_USERNAME` beside `ES_PASSWORD`: a server gets only its declared variables, so an undeclared
 * setting never reached it). At most eight; `known` ones are left out.
 */
export async function variablesNamed(dir: string, known: string[] = []): Promise<NamedVariable[]> {
  return variablesOf(await namesRead(dir), known);
}

/** variablesNamed of the names a package's files read (namesRead), without reading them again. */
export function variablesOf(names: string[], known: string[] = []): NamedVariable[] {
  const read = names.filter((n) => !known.includes(n));
  const credentials = read.filter((n) => CREDENTIAL.test(n));
  const services = new Set([...credentials, ...known].map(serviceOf));
  const settings = read.filter((n) => !CREDENTIAL.test(n) && services.has(serviceOf(n)));
  return [...credentials.map((name) => ({ name, secret: true })), ...settings.map((name) => ({ name, secret: false }))].slice(0, MAX_NAMES);
}

/** The address-like names (`AZURE_DEVOPS_ORG_URL`, `ES_URL`) the package's own files read, in the order first met. */
export async function addressesRead(dir: string): Promise<string[]> {
  return (await namesRead(dir)).filter((n) => ADDRESS.test(n));
}

const serviceOf = (name: string) => name.split('_')[0]!;

/** The names `process.env` is read by in the package's own .js/.cjs/.mjs files, in the order first met. */
export async function namesRead(dir: string): Promise<string[]> {
  const names = new Set<string>();
  const budget = { entries: MAX_ENTRIES, bytes: MAX_TOTAL_BYTES };
  const pending = [dir];
  while (pending.length > 0 && names.size < MAX_READ) {
    const at = pending.shift()!;
    const entries = await fs.readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (--budget.entries < 0 || names.size >= MAX_READ) return [...names];
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const file = path.join(at, e.name);
      if (e.isDirectory()) pending.push(file);
      else if (e.isFile() && /\.[cm]?js$/.test(e.name)) await readNames(file, budget, names);
    }
  }
  return [...names].slice(0, MAX_READ);
}

async function readNames(file: string, budget: { bytes: number }, names: Set<string>): Promise<void> {
  const size = (await fs.stat(file).catch(() => undefined))?.size ?? 0;
  if (size === 0 || size > MAX_FILE_BYTES || size > budget.bytes) return;
  budget.bytes -= size;
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  for (const m of text.matchAll(NAMED)) {
    const name = m[1] ?? m[3]!;
    if (!NOT_THE_PACKAGES.has(name)) names.add(name);
  }
}
