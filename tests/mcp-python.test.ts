/**
 * The Python MCP SDK (`mcp` 2.3, and `fastmcp` 4.0 when its wheels are there) as a client of a collection: a small
 * script (tests/fixtures/python/mcp_client.py) lists and calls a tool of a public collection and of a private one
 * with its owner's key, in the SDK's default negotiation (`auto`: server/discover, 2026-07-28) and in `legacy`
 * (initialize, 2025-11-25); fastmcp in its default only. The SDK is installed with pip into a venv in the temp dir once (reused by later runs);
 * on a machine where python3, venv or the wheels are missing the test is skipped, the reason in its title.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const run = promisify(execFile);
const MCP = 'mcp==2.3.0';
const FASTMCP = 'fastmcp==4.0.10';
const SCRIPT = path.join(FIXTURES_DIR, 'python', 'mcp_client.py');
const VENV = path.join(os.tmpdir(), 'toolshed-tests-python-mcp-2.3.0');
const TEXT = '@toolshed-examples/text-tools';

/** pip without a reachable index fails fast (no retries) and uses what the machine's pip configuration offers. */
const PIP_ENV = { ...process.env, PIP_RETRIES: '0', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };

/** The venv's python, made once; or why there is none. fastmcp is optional: its absence is reported, not fatal. */
async function pythonWithMcp(): Promise<{ python: string; notes: string[] } | { skip: string }> {
  const python = path.join(VENV, 'bin', 'python');
  const ready = path.join(VENV, '.toolshed-ready');
  const notes: string[] = [];
  const exists = async (p: string) =>
    fs.access(p).then(
      () => true,
      () => false,
    );
  if (await exists(ready)) return { python, notes: [(await fs.readFile(ready, 'utf8')).trim()].filter(Boolean) };
  try {
    await fs.rm(VENV, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', VENV], { timeout: 60_000 });
  } catch (e) {
    return { skip: `no python3 with venv here (${(e as Error).message.split('\n')[0]})` };
  }
  try {
    await run(python, ['-m', 'pip', 'install', '--quiet', MCP], { timeout: 170_000, env: PIP_ENV });
  } catch (e) {
    return {
      skip: `pip could not install ${MCP} from what this machine has (${String((e as { stderr?: string }).stderr ?? e)
        .trim()
        .split('\n')
        .at(-1)})`,
    };
  }
  try {
    await run(python, ['-m', 'pip', 'install', '--quiet', FASTMCP], { timeout: 170_000, env: PIP_ENV });
  } catch {
    notes.push(`${FASTMCP} could not be installed here: only the mcp SDK is tried`);
  }
  await fs.writeFile(ready, notes.join('\n'));
  return { python, notes };
}

const setup = await pythonWithMcp();
const title = 'the Python MCP SDK (and fastmcp) lists and calls tools of a public collection and, with a key header, of a private one';

let svc: Service;
let key: string;
let publicUrl: string;
let privateUrl: string;

if ('python' in setup) {
  test.before(async () => {
    svc = await startService({ sandbox: 'process' });
    for (const dir of [path.join(EXAMPLES_DIR, 'text-tools')]) {
      const res = await svc.importPackage(`path:${dir}`);
      if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
    }
    const owner = await svc.createUser({ username: 'py_owner' });
    key = owner.key;
    const pub = await svc.createCollection(key, { name: 'Py public', isPublic: true }, [`${TEXT}::slugify`]);
    const priv = await svc.createCollection(key, { name: 'Py private', isPublic: false }, [`${TEXT}::slugify`]);
    publicUrl = `${svc.url}/api/mcp/py_owner/${pub.uid}/mcp`;
    privateUrl = `${svc.url}/api/mcp/py_owner/${priv.uid}/mcp`;
  });
  test.after.always(() => svc?.close());

  test(title, async (t) => {
    for (const note of setup.notes) t.log(note);
    const { stdout, stderr } = await run(setup.python, [SCRIPT, publicUrl, privateUrl, key], { timeout: 170_000 });
    if (stderr.trim()) t.log(stderr.trim());
    const cases = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ran = cases.filter((c) => !c.skipped);
    for (const c of cases.filter((c) => c.skipped)) t.log(`${c.client}: ${c.skipped}`);
    t.true(ran.some((c) => c.client === 'mcp'));
    t.is(ran.length, setup.notes.some((n) => n.includes('fastmcp')) ? 4 : 6, stdout);
    for (const c of ran) {
      const label = `${c.client} (${c.mode}) on the ${c.collection} collection`;
      t.is(c.error, undefined, `${label}: ${c.error}`);
      t.is(c.version, c.mode === 'auto' ? '2026-07-28' : '2025-11-25', label);
      t.deepEqual(c.tools, ['slugify'], label);
      t.false(c.isError, label);
      t.deepEqual(c.structured, { slug: `python-${c.mode}`, length: 7 + c.mode.length }, label);
      t.true(c.badIsError, label);
      t.regex(c.badText.join(' '), /text/, label);
    }
  });
} else {
  test.skip(`${title} — skipped: ${setup.skip}`, () => undefined);
}
