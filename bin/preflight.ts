/**
 * Preflight: the system programs a command needs, checked before it starts — gVisor's runsc for the sandboxes, ip
 * and nft for sandbox egress, Chromium's headless shell for the browser tests. As root on Debian/Ubuntu it installs what is missing
 * with apt; anywhere else it stops with the one command to run. `planPreflight` decides (a pure function of a
 * machine description, so it is tested on any machine); `runPreflight` looks at this machine and carries the plan out.
 *
 * Shared by `npm start` (bin/start.ts), `npm test` (tests/run.ts) and CI (`npx tsx bin/preflight.ts --for test`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../core/infra/config.js';

/** A system program Toolshed may need. */
export type Program = 'runsc' | 'ip' | 'nft' | 'chromium';
/** Which command the programs are for. */
export type Purpose = 'start' | 'test';

interface Requirement {
  /** The Debian (and Ubuntu) package that provides it. */
  pkg: string;
  /** Why it is needed, for people. */
  what: string;
  /** Where it counts as installed (the places our code looks for it). */
  paths: string[];
}

const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];
export const GVISOR_INSTALL_DOCS = 'https://gvisor.dev/docs/user_guide/install/';

export const REQUIREMENTS: Readonly<Record<Program, Requirement>> = {
  runsc: { pkg: 'runsc', what: 'gVisor sandbox', paths: ['/usr/bin/runsc', '/usr/local/bin/runsc'] },
  ip: { pkg: 'iproute2', what: 'ip, for sandbox network egress', paths: SYSTEM_DIRS.map((d) => `${d}/ip`) },
  nft: { pkg: 'nftables', what: 'nft, for sandbox network egress', paths: SYSTEM_DIRS.map((d) => `${d}/nft`) },
  // The browser tests launch this exact path (tests/browser/helpers.ts): Debian's build of Chromium's headless shell, the
  // same Chromium as its `chromium` package without the desktop browser's processes (the browser files took 88 → 47 s
  // and their Chromium 24 → 11 CPU-s, 2026-12-03). CHROMIUM_PATH=/usr/bin/chromium runs them in the full browser.
  chromium: { pkg: 'chromium-headless-shell', what: "Chromium's headless shell, for the browser tests", paths: ['/usr/bin/chromium-headless-shell'] },
};

/** Everything the decision depends on. */
export interface MachineDescription {
  /** The programs found on the machine. */
  present: readonly Program[];
  root: boolean;
  /** apt-get exists. */
  apt: boolean;
  /** /etc/os-release says Debian or Ubuntu (ID or ID_LIKE). */
  debian: boolean;
  /** The programs the command needs (see `programsFor`). */
  needed: readonly Program[];
  purpose: Purpose;
}

export type Plan = { action: 'none' } | { action: 'install'; packages: string[]; notices: string[] } | { action: 'stop'; message: string };

/** The programs `npm start` (from its sandbox settings) or `npm test` (all of them) needs. */
export function programsFor(purpose: Purpose, config?: Pick<Config, 'SANDBOX' | 'SANDBOX_NETWORK'>): Program[] {
  if (purpose === 'test') return ['runsc', 'ip', 'nft', 'chromium'];
  if (config?.SANDBOX === 'process') return []; // egress is a gVisor feature; the process runner has no network control
  return config?.SANDBOX_NETWORK === 'egress' ? ['runsc', 'ip', 'nft'] : ['runsc'];
}

/** Nothing to do, install these packages with apt, or stop with one message naming the command to run. */
export function planPreflight(m: MachineDescription): Plan {
  const missing = m.needed.filter((p, i) => !m.present.includes(p) && m.needed.indexOf(p) === i);
  if (missing.length === 0) return { action: 'none' };
  const packages = missing.map((p) => REQUIREMENTS[p].pkg);
  const again = `then run \`npm ${m.purpose}\` again`;
  const lacking = `Toolshed needs ${listOf(missing.map((p) => `${REQUIREMENTS[p].pkg} (${REQUIREMENTS[p].what})`))}, not installed here`;
  const orProcess = m.purpose === 'start' && missing.includes('runsc') ? ' (or set SANDBOX=process to run tools without isolation)' : '';
  if (m.debian && m.apt) {
    if (m.root) return { action: 'install', packages, notices: missing.map((p) => `installing ${REQUIREMENTS[p].pkg} (${REQUIREMENTS[p].what}) from Debian…`) };
    const command = `sudo apt-get update && sudo apt-get install -y ${packages.join(' ')}`;
    return { action: 'stop', message: `${lacking}. Run: ${command} — ${again}${orProcess}.` };
  }
  return { action: 'stop', message: `${lacking}. ${howToInstall(missing)}; ${again}${orProcess}.` };
}

/** Instructions for systems without apt: gVisor's own docs for runsc, the system's package manager for the rest. */
function howToInstall(missing: Program[]): string {
  const steps: string[] = [];
  if (missing.includes('runsc')) steps.push(`install gVisor's runsc following ${GVISOR_INSTALL_DOCS} (into /usr/bin or /usr/local/bin)`);
  const others = missing.filter((p) => p !== 'runsc' && p !== 'chromium').map((p) => REQUIREMENTS[p].pkg);
  if (others.length) steps.push(`install ${listOf(others)} with your system's package manager`);
  if (missing.includes('chromium')) steps.push(`install Chromium's headless shell so that it runs as ${REQUIREMENTS.chromium.paths[0]}`);
  const text = steps.join('; ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function listOf(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** This machine, described for `planPreflight`. */
export function describeMachine(purpose: Purpose, needed: readonly Program[]): MachineDescription {
  const present = (Object.keys(REQUIREMENTS) as Program[]).filter((p) => REQUIREMENTS[p].paths.some((f) => fs.existsSync(f)));
  return {
    present,
    root: process.getuid?.() === 0,
    apt: fs.existsSync('/usr/bin/apt-get'),
    debian: isDebianLike(readOsRelease()),
    needed,
    purpose,
  };
}

function readOsRelease(): string {
  try {
    return fs.readFileSync('/etc/os-release', 'utf8');
  } catch {
    return '';
  }
}

export function isDebianLike(osRelease: string): boolean {
  const field = (name: string) => osRelease.match(new RegExp(`^${name}=["']?([^"'\\n]*)`, 'm'))?.[1] ?? '';
  return /\b(debian|ubuntu)\b/i.test(`${field('ID')} ${field('ID_LIKE')}`);
}

export interface PreflightOptions {
  purpose: Purpose;
  config?: Pick<Config, 'SANDBOX' | 'SANDBOX_NETWORK'>;
  /** Where a line for people goes (stderr: stdout may carry JSON logs). */
  say?: (line: string) => void;
  /** Where apt's output goes; shown (its tail) only on failure. */
  aptLog?: string;
  /** Seams for tests: how the machine is looked at, and how apt-get is run. */
  describe?: typeof describeMachine;
  aptGet?: typeof aptGet;
}

export interface PreflightResult {
  /** The command may go on. */
  ok: boolean;
  /** Debian packages installed just now. */
  installed: string[];
}

/** Checks this machine and installs or stops as planned. */
export async function runPreflight(opts: PreflightOptions): Promise<PreflightResult> {
  const say = opts.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const needed = programsFor(opts.purpose, opts.config);
  const describe = opts.describe ?? describeMachine;
  const runApt = opts.aptGet ?? aptGet;
  const plan = planPreflight(describe(opts.purpose, needed));
  if (plan.action === 'none') return { ok: true, installed: [] };
  if (plan.action === 'stop') {
    say(plan.message);
    return { ok: false, installed: [] };
  }
  const aptLog = opts.aptLog ?? path.join(os.tmpdir(), 'toolshed-apt.log');
  for (const notice of plan.notices) say(notice);
  const ok = (await runApt(['update'], aptLog)) && (await runApt(['install', '-y', ...plan.packages], aptLog));
  if (!ok) {
    say(tail(aptLog, 20));
    say(`apt-get failed (full output in ${aptLog}); install ${plan.packages.join(' ')} by hand, then run \`npm ${opts.purpose}\` again.`);
    return { ok: false, installed: [] };
  }
  const after = planPreflight(describe(opts.purpose, needed));
  if (after.action !== 'none') {
    say(`apt-get installed ${plan.packages.join(' ')}, yet a program is still missing (output in ${aptLog}).`);
    return { ok: false, installed: plan.packages };
  }
  return { ok: true, installed: plan.packages };
}

async function aptGet(args: string[], logFile: string): Promise<boolean> {
  const fd = fs.openSync(logFile, 'a');
  try {
    fs.writeSync(fd, `\n$ apt-get ${args.join(' ')}\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const child = spawn('apt-get', args, { env, stdio: ['ignore', fd, fd] });
    return await new Promise<boolean>((resolve) => {
      child.on('error', () => resolve(false));
      child.on('close', (code) => resolve(code === 0));
    });
  } finally {
    fs.closeSync(fd);
  }
}

function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** CLI: `npx tsx bin/preflight.ts --for start|test`; exit 0 when ready, 1 otherwise. */
async function main(argv: string[]): Promise<number> {
  const purpose = argv[argv.indexOf('--for') + 1];
  if (!argv.includes('--for') || (purpose !== 'start' && purpose !== 'test')) {
    process.stderr.write('usage: npx tsx bin/preflight.ts --for start|test\n');
    return 2;
  }
  // What `start` needs depends on its sandbox settings, parsed here as every entry does.
  const config = purpose === 'start' ? loadConfig(process.env) : undefined;
  const result = await runPreflight({ purpose, config });
  const programs = programsFor(purpose, config).join(', ') || 'no system programs';
  if (result.ok) {
    const done = result.installed.length ? `installed ${result.installed.join(' ')}` : 'nothing to do';
    process.stderr.write(`preflight: ${done}; everything \`npm ${purpose}\` needs is installed (${programs})\n`);
  }
  return result.ok ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`preflight failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
