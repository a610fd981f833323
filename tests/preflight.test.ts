/**
 * The preflight's decision on many machine descriptions, its install and stop paths with apt faked, the real
 * preflight on this machine (everything is installed here, so nothing to do), and the log format: JSON unless a
 * person is at a terminal, and never a secret in either format.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { textSink } from './helpers/text-sink.js';
import { GVISOR_INSTALL_DOCS, isDebianLike, planPreflight, programsFor, runPreflight, type MachineDescription, type Program } from '../bin/preflight.js';
import { withGeneratedSecrets } from '../core/infra/bootstrap.js';
import { loadConfig } from '../core/infra/config.js';
import { createLogger, prettyMessage, resolveLogFormat, type LogFormat } from '../core/infra/logger.js';
import { SOURCE_ROOT } from './helpers/source-root.js';

// Run through tsx from the sources (also when this file runs from the compiled tree).
const ROOT = SOURCE_ROOT;
const ALL: Program[] = ['runsc', 'ip', 'nft', 'chromium'];

/** A Debian machine, as root, with apt, that has everything; each test takes away what it is about. */
function machine(over: Partial<MachineDescription> = {}): MachineDescription {
  return { present: ALL, root: true, apt: true, debian: true, needed: programsFor('start', loadConfig({})), purpose: 'start', ...over };
}

test('everything present: nothing to do, for start and for test', (t) => {
  t.deepEqual(planPreflight(machine()), { action: 'none' });
  t.deepEqual(planPreflight(machine({ purpose: 'test', needed: programsFor('test') })), { action: 'none' });
});

test('root on Debian without runsc: install runsc with apt, one notice', (t) => {
  t.deepEqual(planPreflight(machine({ present: ['ip', 'nft', 'chromium'] })), {
    action: 'install',
    packages: ['runsc'],
    notices: ['installing runsc (gVisor sandbox) from Debian…'],
  });
});

test('not root on Debian: stop with the exact sudo command, and SANDBOX=process as the way around', (t) => {
  const plan = planPreflight(machine({ present: [], root: false }));
  if (plan.action !== 'stop') return t.fail(`expected stop, got ${plan.action}`);
  t.true(plan.message.includes('sudo apt-get install -y runsc'), plan.message);
  t.true(plan.message.includes('sudo apt-get update'), 'a fresh machine has no package lists');
  t.true(plan.message.includes('`npm start` again'));
  t.true(plan.message.includes('SANDBOX=process'));
  t.false(plan.message.includes('\n'), 'one line');
});

test('SANDBOX=process: runsc is not needed, even with egress set and nothing installed', (t) => {
  t.deepEqual(programsFor('start', loadConfig({ SANDBOX: 'process' })), []);
  t.deepEqual(programsFor('start', loadConfig({ SANDBOX: 'process', SANDBOX_NETWORK: 'egress' })), []);
  const needed = programsFor('start', loadConfig({ SANDBOX: 'process' }));
  t.deepEqual(planPreflight(machine({ present: [], root: false, apt: false, debian: false, needed })), { action: 'none' });
});

test('SANDBOX_NETWORK=egress: iproute2 and nftables as well', (t) => {
  const needed = programsFor('start', loadConfig({ SANDBOX_NETWORK: 'egress' }));
  t.deepEqual(needed, ['runsc', 'ip', 'nft']);
  const asRoot = planPreflight(machine({ present: ['runsc'], needed }));
  t.like(asRoot, { action: 'install', packages: ['iproute2', 'nftables'] });
  const asUser = planPreflight(machine({ present: ['runsc'], root: false, needed }));
  t.like(asUser, { action: 'stop' });
  if (asUser.action === 'stop') {
    t.true(asUser.message.includes('sudo apt-get install -y iproute2 nftables'), asUser.message);
    t.false(asUser.message.includes('SANDBOX=process'), 'runsc is there; the way around is not about it');
  }
});

test("a test run needs Chromium's headless shell too, and everything else", (t) => {
  t.deepEqual(programsFor('test'), ['runsc', 'ip', 'nft', 'chromium']);
  const plan = planPreflight(machine({ present: [], purpose: 'test', needed: programsFor('test') }));
  t.like(plan, { action: 'install', packages: ['runsc', 'iproute2', 'nftables', 'chromium-headless-shell'] });
  if (plan.action === 'install') t.is(plan.notices[3], "installing chromium-headless-shell (Chromium's headless shell, for the browser tests) from Debian…");
  const stop = planPreflight(machine({ present: ['runsc', 'ip', 'nft'], root: false, purpose: 'test', needed: programsFor('test') }));
  t.like(stop, { action: 'stop' });
  if (stop.action === 'stop') t.true(stop.message.includes('sudo apt-get install -y chromium-headless-shell') && stop.message.includes('`npm test` again'));
});

test("not Debian (or no apt): a one-line instruction pointing at gVisor's install docs, never apt-get", (t) => {
  for (const m of [
    machine({ present: [], debian: false, apt: false }),
    machine({ present: [], root: true, debian: true, apt: false }),
    machine({ present: [], debian: false, apt: true }),
  ]) {
    const plan = planPreflight(m);
    if (plan.action !== 'stop') return t.fail(`expected stop, got ${plan.action}`);
    t.true(plan.message.includes(GVISOR_INSTALL_DOCS), plan.message);
    t.false(plan.message.includes('apt-get'));
    t.false(plan.message.includes('\n'));
  }
  const tests = planPreflight(machine({ present: [], debian: false, apt: false, purpose: 'test', needed: programsFor('test') }));
  if (tests.action !== 'stop') return t.fail();
  t.regex(tests.message, /iproute2 and nftables with your system's package manager/);
  t.regex(tests.message, /\/usr\/bin\/chromium-headless-shell/);
});

test('Debian and Ubuntu, and their derivatives, are recognised from /etc/os-release', (t) => {
  t.true(isDebianLike('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'));
  t.true(isDebianLike('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n'));
  t.true(isDebianLike('ID=linuxmint\nID_LIKE="ubuntu debian"\n'));
  t.false(isDebianLike('ID="fedora"\n'));
  t.false(isDebianLike('ID=alpine\n'));
  t.false(isDebianLike('ID=arch\nID_LIKE=archlinux\n'), 'no substring match');
  t.false(isDebianLike(''));
});

test('runPreflight installs as planned: notices, apt-get update once, then install -y, and checks again', async (t) => {
  const said: string[] = [];
  const calls: string[][] = [];
  let installed = false;
  const result = await runPreflight({
    purpose: 'start',
    config: loadConfig({}),
    say: (line) => said.push(line),
    describe: (purpose, needed) => machine({ purpose, needed, present: installed ? ALL : [] }),
    aptGet: async (args) => {
      calls.push(args);
      if (args[0] === 'install') installed = true;
      return true;
    },
  });
  t.deepEqual(result, { ok: true, installed: ['runsc'] });
  t.deepEqual(calls, [['update'], ['install', '-y', 'runsc']]);
  t.deepEqual(said, ['installing runsc (gVisor sandbox) from Debian…']);
});

test('runPreflight when apt fails: the tail of its log, the log file, and not ok', async (t) => {
  const aptLog = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'preflight-')), 'apt.log');
  await fs.writeFile(aptLog, 'Reading package lists...\nE: Unable to locate package runsc\n');
  const said: string[] = [];
  const result = await runPreflight({
    purpose: 'test',
    say: (line) => said.push(line),
    aptLog,
    describe: (purpose, needed) => machine({ purpose, needed, present: ['ip', 'nft', 'chromium'] }),
    aptGet: async (args) => args[0] === 'update',
  });
  t.false(result.ok);
  t.true(said.some((l) => l.includes('E: Unable to locate package runsc')));
  t.true(said.some((l) => l.includes(aptLog) && l.includes('`npm test` again')));
});

test('runPreflight that must stop says the one message and never runs apt', async (t) => {
  const said: string[] = [];
  const result = await runPreflight({
    purpose: 'start',
    config: loadConfig({}),
    say: (line) => said.push(line),
    describe: (purpose, needed) => machine({ purpose, needed, present: [], root: false }),
    aptGet: async () => t.fail('apt-get ran') as never,
  });
  t.deepEqual(result, { ok: false, installed: [] });
  t.is(said.length, 1);
  t.true(said[0].includes('sudo apt-get install -y runsc'));
});

/** Runs a TypeScript file or module snippet with tsx, stdout and stderr piped (so not a terminal). */
function runTsx(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

test("the real preflight on this machine (CI's): everything for npm test is installed, nothing to do, exit 0", async (t) => {
  const { code, stdout, stderr } = await runTsx([path.join(ROOT, 'bin/preflight.ts'), '--for', 'test']);
  t.is(code, 0, stderr);
  t.regex(stdout + stderr, /preflight: nothing to do; everything `npm test` needs is installed \(runsc, ip, nft, chromium\)/);
  t.notRegex(stdout + stderr, /installing/);
});

test('log format: pretty only for auto on a terminal; JSON otherwise', (t) => {
  const cases: [LogFormat, boolean, 'json' | 'pretty'][] = [
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ];
  for (const [requested, tty, expected] of cases) t.is(resolveLogFormat(requested, tty), expected, `${requested}, tty=${tty}`);
});

test('the logger writes JSON lines when stdout is not a terminal (LOG_FORMAT=auto)', async (t) => {
  const snippet = `const { createLogger } = await import('./core/infra/logger.ts'); createLogger('info', undefined, 'auto').info({ n: 1 }, 'hello');`;
  const { code, stdout, stderr } = await runTsx(['--input-type=module', '-e', snippet]);
  t.is(code, 0, stderr);
  const line = JSON.parse(stdout.trim());
  t.like(line, { level: 30, msg: 'hello', n: 1 });
});

test("a pretty line shows the fields its message does not already say, and an error's stack", (t) => {
  const base = { level: 30, time: 1, pid: 7, hostname: 'h' };
  t.is(
    prettyMessage({ ...base, msg: 'database: embedded Postgres started on 127.0.0.1:5433', dataDir: '/d/pg', port: 5433 }),
    'database: embedded Postgres started on 127.0.0.1:5433  dataDir=/d/pg',
  );
  t.is(prettyMessage({ ...base, msg: 'database migrated: 18 migrations applied', applied: 18 }), 'database migrated: 18 migrations applied');
  t.is(prettyMessage({ ...base, msg: 'job done', attempts: 1, note: 'two words' }), 'job done  attempts=1  note="two words"');
  const err = { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' };
  t.is(prettyMessage({ ...base, msg: 'failed', err }), 'failed  err="boom"\nError: boom\n    at here');
});

test('secrets are redacted in both formats', (t) => {
  for (const format of ['json', 'pretty'] as const) {
    const out = textSink();
    const logger = createLogger('info', out.stream, format);
    logger.info({ token: 'tok-s3cret', env: { API_KEY: 'env-s3cret' }, ADMIN_TOKEN: 'adm-s3cret', SECRETS_KEY: 'key-s3cret' }, 'something happened');
    t.true(out.text().includes('something happened'), format);
    t.false(/s3cret/.test(out.text()), `${format}: ${out.text()}`);
    if (format === 'pretty') t.throws(() => JSON.parse(out.text().trim()));
  }
});

test('a generated admin token is named by its file in the log, never by its value', async (t) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'preflight-secrets-'));
  const out = textSink();
  const config = await withGeneratedSecrets(loadConfig({ DATA_DIR: dataDir }), createLogger('info', out.stream));
  const file = path.join(dataDir, 'admin-token');
  t.is((await fs.readFile(file, 'utf8')).trim(), config.ADMIN_TOKEN!);
  t.true(out.text().includes(file));
  t.false(out.text().includes(config.ADMIN_TOKEN!));
  t.false(out.text().includes(config.SECRETS_KEY!));
  await fs.rm(dataDir, { recursive: true, force: true });
});
