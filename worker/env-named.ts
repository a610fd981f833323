/**
 * Credential-like variables a package's own code names (`process.env.FIRECRAWL_API_KEY`,
 * `process.env["PARALLEL_API_KEY"]`). Many packages read their key only when a tool runs (firecrawl-aisdk,
 * @parallel-web/ai-sdk-tools, @modelcontextprotocol/server-github), so an import that only loads them never sees it
 * read, and callers would not learn which key to pass. The files are read as text, never run; the package's
 * dependencies (its node_modules) are not read.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** As the guest's discovery (sandbox/guest/discover.cjs SECRET_NAME): names that hold a credential. */
const CREDENTIAL = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|ACCESS_KEY_ID|SECRET_ACCESS_KEY)$/;
const NAMED = /process\.env(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*(['"`])([A-Z][A-Z0-9_]*)\2\s*\])/g;
/** Names a bundled library reads for itself, not the package's credential (dotenv's decryption key). */
const NOT_THE_PACKAGES = new Set(['DOTENV_KEY']);
const MAX_ENTRIES = 5000;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
const MAX_NAMES = 8;

/** The credential-like variables named in the package's own .js/.cjs/.mjs files, in the order first met (at most eight). */
export async function variablesNamed(dir: string): Promise<string[]> {
  const names = new Set<string>();
  const budget = { entries: MAX_ENTRIES, bytes: MAX_TOTAL_BYTES };
  const pending = [dir];
  while (pending.length > 0 && names.size < MAX_NAMES) {
    const at = pending.shift()!;
    const entries = await fs.readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (--budget.entries < 0 || names.size >= MAX_NAMES) return [...names];
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const file = path.join(at, e.name);
      if (e.isDirectory()) pending.push(file);
      else if (e.isFile() && /\.[cm]?js$/.test(e.name)) await readNames(file, budget, names);
    }
  }
  return [...names].slice(0, MAX_NAMES);
}

async function readNames(file: string, budget: { bytes: number }, names: Set<string>): Promise<void> {
  const size = (await fs.stat(file).catch(() => undefined))?.size ?? 0;
  if (size === 0 || size > MAX_FILE_BYTES || size > budget.bytes) return;
  budget.bytes -= size;
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  for (const m of text.matchAll(NAMED)) {
    const name = m[1] ?? m[3]!;
    if (CREDENTIAL.test(name) && !NOT_THE_PACKAGES.has(name)) names.add(name);
  }
}
