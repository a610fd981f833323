/**
 * The Python MCP SDK (`mcp` 2.3, and `fastmcp` 4.0 when its wheels are there) as a client of a collection: a small
 * script (tests/fixtures/python/mcp_client.py) lists and calls a tool of a public collection and of a private one
 * with its owner's key, in the SDK's default negotiation (`auto`: server/discover, 2026-07-28) and in `legacy`
 * (initialize, 2025-11-25); fastmcp in its default only. The SDK is installed with pip into a venv made once per
 * machine (tests/helpers/python-venv.ts: reused by later runs while its wheels are unchanged); on a machine where
 * python3, venv or the wheels are missing the test is skipped, the reason in its title.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pythonVenv } from './helpers/python-venv.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const run = promisify(execFile);
const MCP = 'mcp==2.3.0';
const FASTMCP = 'fastmcp==4.0.10';
const SCRIPT = path.join(FIXTURES_DIR, 'python', 'mcp_client.py');
const TEXT = '@toolshed-examples/text-tools';

const setup = await pythonVenv([MCP], [FASTMCP]);
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
