/**
 * `npm test`: the preflight (runsc, ip, nft and Chromium, installed with apt as root on Debian), the compiled tree
 * (tests/helpers/compiled-tree.ts: the TypeScript transpiled once, so no test process loads it through tsx), then one
 * Postgres for the whole run, the template database migrated once, ava in the compiled tree (each test file clones the
 * template), and the last line `N passed, N failed`. Files are named as in the sources (`npm test -- tests/x.test.ts`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runPreflight } from '../bin/preflight.js';
import { buildWeb } from '../web/build.js';
import { buildCompiledTree } from './helpers/compiled-tree.js';
import { writeRunContract } from './helpers/contract.js';
import { openApiDocument } from '../api/operations/index.js';
import { prepareTemplate, startTestServer } from './helpers/postgres.js';

/**
 * The files of the waiting lane: each spends most of its time waiting (CPU over wall time 0.2–0.6 in a full run,
 * 2026-11-27; 0.1–0.2 with their children's on 2026-12-04), for 30–150 s. They run `WAITING_SLOTS` at a time: with
 * the short files grouped (groupsOf) the main lane's slots came to ~640 s of a 675 s run and the waiting lane, one at
 * a time, to 652 s, its own ten files ~500 s of it at ~0.1 of a core.
 */
const WAITING_SLOTS = 2;
const WAITING = [
  'tests/workers.test.ts',
  'tests/faults.test.ts',
  'tests/faults-restarts.test.ts',
  'tests/sandbox-mounts.test.ts',
  'tests/security/llm-leaks.test.ts',
  'tests/scenarios-fairness.test.ts',
  'tests/mcp-silent.test.ts',
  'tests/security/fairness.test.ts',
  'tests/security/amplification.test.ts',
  'tests/sse-streams.test.ts',
];

/**
 * A test file's name in the compiled tree: `tests/x.test.ts` is `tests/x.test.js` there; a path into the repository
 * given whole is taken relative to it (ava runs in the tree).
 */
const compiledName = (arg: string) => {
  const inRepository = path.isAbsolute(arg) && !path.relative(process.cwd(), arg).startsWith('..');
  return (inRepository ? path.relative(process.cwd(), arg) : arg).replace(/\.test\.ts$/, '.test.js');
};

/**
 * Each file's wall seconds in a full run (tests/file-seconds.json, copied from a run's tests/output/file-seconds.json):
 * files start longest first, so that the run does not end with one slot busy on a long file started last. A file
 * not listed counts as `UNKNOWN_SECONDS`.
 */
const SECONDS_FILE = 'tests/file-seconds.json';
const UNKNOWN_SECONDS = 30;

async function knownSeconds(): Promise<Record<string, number>> {
  try {
    return JSON.parse(await fs.readFile(SECONDS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

/**
 * The plan of a whole run: the waiting files, two at a time, in a lane of their own; the longer of the rest in the main
 * lane (ava's configured concurrency, two); and a shared tail of the shortest files, which each lane takes a chunk at a
 * time once its own files are done. A static split (the tail's files put in one lane or the other ahead of the run) is
 * only as good as tests/file-seconds.json: a machine faster or slower than the one that wrote it changes the CPU-bound
 * files' seconds and not the waiting ones', and the lane that got too much ends last while the other's slots idle (a
 * clean-clone run on 2026-12-02 by figures from a loaded machine: the waiting lane 945 s, the main lane's slots 760 s).
 * The tail holds half again as many seconds as a static balance would move, so that either lane can take more of it.
 */
interface Plan {
  main: string[];
  waiting: string[];
  /** Longest first; lanes take chunks from the front. */
  tail: string[];
}

async function planOf(waiting: string[], grouped: boolean): Promise<Plan & { secondsOf: (f: string) => number; groups: Groups }> {
  const files = (await fs.readdir('tests', { recursive: true })).map((f) => path.join('tests', f)).filter((f) => f.endsWith('.test.ts'));
  const missing = waiting.filter((f) => !files.includes(f));
  if (missing.length) throw new Error(`tests/run.ts: no such test file: ${missing.join(', ')}`);
  const seconds = await knownSeconds();
  const fileSeconds = (f: string) => seconds[f] ?? UNKNOWN_SECONDS;
  const groups = grouped
    ? await groupsOf(
        files.filter((f) => !waiting.includes(f)),
        fileSeconds,
      )
    : new Map<string, string[]>();
  const inGroups = new Set([...groups.values()].flat());
  const all = [...files.filter((f) => !inGroups.has(f)), ...groups.keys()];
  const secondsOf = (f: string) => groups.get(f)?.reduce((n, m) => n + fileSeconds(m), 0) ?? fileSeconds(f);
  const longestFirst = (files: string[]) => [...files].sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
  const main = longestFirst(all.filter((f) => !waiting.includes(f)));
  const sum = (files: string[]) => files.reduce((n, f) => n + secondsOf(f), 0);
  // What a static balance would move: the shortest files, until each waiting slot holds as many seconds as a main slot.
  let [mainSeconds, waitingSeconds, moved] = [sum(main), sum(waiting), 0];
  for (let i = main.length - 1; i > 1 && (waitingSeconds + secondsOf(main[i]!)) / WAITING_SLOTS <= (mainSeconds - secondsOf(main[i]!)) / 2; i--) {
    mainSeconds -= secondsOf(main[i]!);
    waitingSeconds += secondsOf(main[i]!);
    moved += secondsOf(main[i]!);
  }
  const tail: string[] = [];
  while (main.length > 2 && sum(tail) + secondsOf(main.at(-1)!) <= 1.5 * moved) tail.unshift(main.pop()!);
  return { main, waiting: longestFirst(waiting), tail, secondsOf, groups };
}

/**
 * Short files share a process (issue 46 item 6): a test process pays ~1.5–2.5 CPU-s before its first test (Node and
 * ava, then loading the API's and the worker's code: api/server.js alone ~0.8 CPU-s), as much as a short file's tests
 * themselves. Files of up to `GROUP_FILE_SECONDS` are packed, longest first, into groups of up to `GROUP_SECONDS` (the
 * sum of their files' seconds); a group is one test file of the compiled tree that imports its files in turn, so ava
 * runs them in one process as one file: every file's hooks and tests as written (each still boots its own service),
 * its `before` hooks beside the others', its serial tests one after another, then every concurrent test at once.
 * `TOOLSHED_TEST_GROUPS=0` gives every file a process of its own again. One event loop serves a group's services,
 * tests and browsers, so groups stay small, and hold at most one browser file: with groups of up to 60 s of files of
 * up to 25 s (a clean-clone run, 2026-12-04), the largest took 87 s where their files' seconds said 60, and a group of
 * three browser files and embedded-postgres had a page that did not render its sign-up form within Playwright's 30 s.
 */
const GROUP_FILE_SECONDS = 15;
const GROUP_SECONDS = 40;
/**
 * Files that keep a process of their own: process-warnings listens for the process's own warnings; registry-tools sets
 * a variable of the process's environment while its CLI runs; embedded-postgres starts Postgres servers of its own and
 * waits for psql with spawnSync, which holds the event loop every file of a group shares; sandbox-cpu samples its
 * sandboxes' CPU accounting every 50 ms while a tool spins for 3 s, and in a group (a clean-clone run, 2026-12-04) got
 * fewer than two samples inside the window; openapi compiles the whole document's validators three times and
 * generates their module, seconds of synchronous CPU (a minute under load), and in a group beside a saturating
 * benchmark (2026-12-06) its event loop held mcp-2026's tool calls and its own /docs page load past their limits. A file with a
 * top-level `await` before its tests (mcp-python) keeps one
 * too (`TOP_LEVEL_AWAIT`): ava takes declarations only until the tick after a file's first one, which in a group is
 * the group's first file's.
 */
const ALONE = [
  'tests/process-warnings.test.ts',
  'tests/registry-tools.test.ts',
  'tests/embedded-postgres.test.ts',
  'tests/security/sandbox-cpu.test.ts',
  'tests/openapi.test.ts',
];
const TOP_LEVEL_AWAIT = /^(?:export\s+)?(?:(?:const|let|var)\s[^=]*=\s*)?await\b/m;

/** The groups of a run: each group's name in the compiled tree (`tests/groups/NN.test.ts`) and its files. */
type Groups = Map<string, string[]>;

async function groupsOf(files: string[], secondsOf: (f: string) => number): Promise<Groups> {
  const open: { files: string[]; seconds: number }[] = [];
  const awaits = new Set<string>();
  for (const f of files) if (TOP_LEVEL_AWAIT.test(await fs.readFile(f, 'utf8'))) awaits.add(f);
  const fits = (f: string) => !ALONE.includes(f) && !awaits.has(f) && secondsOf(f) <= GROUP_FILE_SECONDS;
  const browser = (files: string[]) => files.some((m) => m.startsWith('tests/browser/'));
  for (const f of [...files].filter(fits).sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b))) {
    const group = open.find((g) => g.seconds + secondsOf(f) <= GROUP_SECONDS && !(browser([f]) && browser(g.files)));
    if (group) {
      group.files.push(f);
      group.seconds += secondsOf(f);
    } else open.push({ files: [f], seconds: secondsOf(f) });
  }
  const groups: Groups = new Map();
  for (const [i, g] of open.filter((g) => g.files.length > 1).entries()) groups.set(`tests/groups/${String(i + 1).padStart(2, '0')}.test.ts`, g.files);
  return groups;
}

/** Writes each group's file into the compiled tree: its files imported in order (ESM evaluates them one by one). */
async function writeGroups(tree: string, groups: Groups): Promise<void> {
  await fs.mkdir(path.join(tree, 'tests', 'groups'), { recursive: true });
  for (const [name, files] of groups) {
    const imports = files.map((f) => `import ${JSON.stringify(path.relative('tests/groups', compiledName(f)))};\n`);
    await fs.writeFile(path.join(tree, compiledName(name)), `// ${files.join(', ')}\n${imports.join('')}`);
  }
}

/** Seconds of tail files one ava process of a lane takes at once: fewer processes to start, a short drain at the end. */
const TAIL_CHUNK_SECONDS = 40;

/** The machine's CPU time so far, busy and all, in clock ticks (the first line of /proc/stat), or undefined off Linux. */
async function machineTicks(): Promise<{ busy: number; all: number } | undefined> {
  const line = (await fs.readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0];
  if (!line.startsWith('cpu ')) return undefined;
  const [user, nice, system, idle, iowait, ...rest] = line.split(/\s+/).slice(1).map(Number);
  const all = [user, nice, system, idle, iowait, ...rest].reduce((a, b) => a + (b || 0), 0);
  return { busy: all - idle - iowait, all };
}

interface FileTime {
  file: string;
  lane: string;
  wall: number;
  cpu: number;
  children: number;
  /** Epoch seconds of its end (older lines lack it). */
  end?: number;
}

/**
 * How many files ran at once over the run, from the first file's start to the last one's end: seconds with one test
 * process and with none (the two lanes hold up to four; under two, a core may be idle), and the seconds before the
 * first file started (the preflight, the compiled tree, Postgres and its template, the web app).
 */
function occupancy(times: FileTime[], startedMs: number): string {
  const spans = times.filter((t) => t.end !== undefined).map((t) => [t.end! - t.wall, t.end!] as const);
  if (spans.length === 0) return '';
  const edges = spans.flatMap(([a, b]) => [[a, 1] as const, [b, -1] as const]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const under = [0, 0]; // seconds with 0 and with 1 file running
  let running = 0;
  let at = edges[0]![0];
  for (const [time, step] of edges) {
    if (running < 2) under[running]! += time - at;
    running += step;
    at = time;
  }
  const first = Math.round(edges[0]![0] - startedMs / 1000);
  return `; before the first file ${first} s, then ${Math.round(under[1]!)} s with one file running, ${Math.round(under[0]!)} s with none`;
}

/**
 * The files' times the preload recorded (tests/helpers/file-times.ts): the slowest printed, every file's wall seconds
 * written to tests/output/file-seconds.json (the form of tests/file-seconds.json).
 */
async function reportFileTimes(
  startedMs: number,
  timesFile: string,
  whole: boolean,
  ticksAtStart: Awaited<ReturnType<typeof machineTicks>>,
  postgresDir: string | undefined,
  groups: Groups,
): Promise<void> {
  const text = await fs.readFile(timesFile, 'utf8').catch(() => '');
  const times: FileTime[] = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .sort((a: FileTime, b: FileTime) => b.wall - a.wall);
  if (times.length === 0) return;
  const sum = (f: (t: FileTime) => number) => Math.round(times.reduce((n, t) => n + f(t), 0));
  const lanes = [...new Set(times.map((t) => t.lane).filter(Boolean))].map((l) => `${l} ${sum((t) => (t.lane === l ? t.wall : 0))}`);
  const ticks = await machineTicks();
  // Busy share of the whole machine while the run ran (other users' processes included): near 100 %, only less CPU
  // makes the run faster; well below, the lanes leave cores idle.
  const busy = ticks && ticksAtStart ? ` (machine CPU ${Math.round((100 * (ticks.busy - ticksAtStart.busy)) / (ticks.all - ticksAtStart.all))} % busy)` : '';
  const postgres = postgresDir ? await postgresCpu(postgresDir) : undefined;
  console.log(
    `\nfile times (${times.length} test processes${groups.size ? `, ${[...groups.keys()].filter((g) => times.some((t) => t.file === g)).length} of them groups` : ''}): ${sum((t) => t.wall)} file-s${lanes.length ? ` (${lanes.join(', ')})` : ''}, test processes ${sum((t) => t.cpu)} CPU-s, their children ${sum((t) => t.children)} CPU-s${postgres === undefined ? '' : `, Postgres ${Math.round(postgres)} CPU-s`}${busy}${occupancy(times, startedMs)}`,
  );
  console.log('  wall s   CPU s  children  lane     file');
  for (const t of times.slice(0, 25)) {
    const files = groups.get(t.file);
    const name = files ? `${t.file} (${files.map((f) => path.basename(f, '.test.ts')).join(', ')})` : t.file;
    console.log(`  ${t.wall.toFixed(1).padStart(6)}  ${t.cpu.toFixed(1).padStart(6)}  ${t.children.toFixed(1).padStart(8)}  ${t.lane.padEnd(7)}  ${name}`);
  }
  if (!whole) return;
  // A grouped file's seconds for tests/file-seconds.json stay those it had (a file's own come from a run with
  // TOOLSHED_TEST_GROUPS=0): a group's wall time, shorter than its files' sum, would shrink them run after run and
  // the groups would grow with each refresh.
  const known = await knownSeconds();
  const fileSeconds = times.flatMap((t): [string, number][] => {
    const files = groups.get(t.file);
    return files ? files.map((f) => [f, known[f] ?? UNKNOWN_SECONDS]) : [[t.file, t.wall]];
  });
  const seconds = Object.fromEntries(fileSeconds.sort((a, b) => a[0].localeCompare(b[0])).map(([f, wall]) => [f, Math.round(wall)]));
  await fs.mkdir('tests/output', { recursive: true });
  await fs.writeFile('tests/output/file-seconds.json', `${JSON.stringify(seconds, null, 2)}\n`);
  await fs.writeFile('tests/output/file-times.jsonl', times.map((t) => `${JSON.stringify(t)}\n`).join(''));
}

/**
 * CPU seconds of the run's Postgres server so far: the postmaster's own and that of the backends it has reaped
 * (`/proc/<pid>/stat` utime, stime, cutime, cstime), one backend per connection of every test file's service.
 */
async function postgresCpu(dir: string): Promise<number | undefined> {
  try {
    const pid = (await fs.readFile(path.join(dir, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0].trim();
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i]), 0) / 100;
  } catch {
    return undefined;
  }
}

/**
 * What failed, again at the end of the run, where a log's tail (all a CI page may show) has it: each failed ava
 * process's ✘ lines and its report after ava's `─` rule (the errors, their code and stacks), at most
 * `FAILURE_LINES` lines a process; a process that failed without a ✘ line (a file that did not load, a timeout) with
 * the last lines it printed.
 */
const FAILURE_LINES = 80;

function reportFailures(outputs: { code: number; out: string }[]): void {
  const failed = outputs.filter((o) => o.code !== 0);
  if (failed.length === 0) return;
  console.log(`\nfailures (${failed.length} of ${outputs.length} ava processes):`);
  for (const o of failed) {
    const lines = o.out.split('\n');
    const crosses = lines.filter((l) => /^\s*✘/.test(l));
    const rule = lines.findIndex((l) => l.trim() === '─');
    const report = rule >= 0 ? lines.slice(rule + 1) : lines.slice(-FAILURE_LINES);
    const shown = [...crosses, ...report.filter((l) => !/^\s*✔/.test(l))].slice(0, FAILURE_LINES);
    console.log(`--- exit code ${o.code}`);
    for (const l of shown) console.log(l);
  }
}

/** One ava process in the compiled tree; its output goes to ours a whole line at a time (two lanes write beside each other). */
function runAva(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; out: string }> {
  // ava's CLI run by this Node directly: `npx ava` costs another Node process (~0.4 CPU-s) for each of a run's ava processes.
  const cli = path.join(process.cwd(), 'node_modules', 'ava', 'entrypoints', 'cli.mjs');
  const child = spawn(process.execPath, [cli, ...args.map(compiledName)], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const relay = (stream: NodeJS.ReadableStream, to: NodeJS.WritableStream) => {
    let partial = '';
    stream.on('data', (d) => {
      out += d;
      const lines = (partial + d).split('\n');
      partial = lines.pop()!;
      if (lines.length) to.write(`${lines.join('\n')}\n`);
    });
    stream.on('end', () => partial && to.write(`${partial}\n`));
  };
  relay(child.stdout!, process.stdout);
  relay(child.stderr!, process.stderr);
  return new Promise((resolve) => child.on('close', (c) => resolve({ code: c ?? 1, out })));
}

async function main(): Promise<number> {
  const started = Date.now();
  const ticksAtStart = await machineTicks();
  if (!(await runPreflight({ purpose: 'test' })).ok) {
    console.log('0 passed, 1 failed');
    return 1;
  }
  const tree = await buildCompiledTree(process.cwd());
  // The OpenAPI document and its response validators, made once for every test process (tests/helpers/contract.ts).
  const contractDir = path.join(tree, '.contract');
  writeRunContract(openApiDocument(), contractDir);
  const pg = await startTestServer();
  const cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-pkgcache-'));
  await fs.chmod(cacheDir, 0o755);
  // The gVisor rootfs and its startup snapshot (~6 s of a blocked worker start each) are built once for the run.
  const rootfsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-rootfs-'));
  await fs.chmod(rootfsDir, 0o755);
  const timesDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-times-'));
  const timesFile = path.join(timesDir, 'times.jsonl');
  const args = process.argv.slice(2);
  // The web app the browser files serve, built once for the run (~1 CPU-s and ~1.5 s of each browser file's start).
  const webDir = args.length === 0 || args.some((a) => a.includes('browser')) ? path.join(timesDir, 'web') : undefined;
  try {
    await Promise.all([prepareTemplate(pg.serverUrl), webDir && buildWeb(webDir)]);
    // LOG_FORMAT=json: a process a test starts logs JSON lines even if it ever gets a terminal.
    const env = {
      ...process.env,
      LOG_FORMAT: 'json',
      TOOLSHED_TEST_SERVER_URL: pg.serverUrl,
      TOOLSHED_TEST_CACHE_DIR: cacheDir,
      TOOLSHED_TEST_ROOTFS_DIR: rootfsDir,
      TOOLSHED_TEST_TIMES: timesFile,
      TOOLSHED_TEST_CONTRACT_DIR: contractDir,
      ...(webDir ? { TOOLSHED_TEST_WEB_DIR: webDir } : {}),
    };
    // Files that mostly wait (a job outliving the engine's timers, killed workers and their leases, a limit waited out
    // in full) use a fraction of a core: without arguments they run two at a time in a lane of their own beside the
    // two-file lane of the rest, so that their waiting does not hold one of the two CPU-bound slots (planOf).
    const outputs: { code: number; out: string }[] = [];
    let groups: Groups = new Map();
    if (args.length > 0) {
      // A group named on the command line (as the run printed it) is the run's group of that name.
      if (args.some((a) => a.startsWith('tests/groups/'))) {
        groups = (await planOf(WAITING, true)).groups;
        await writeGroups(tree, groups);
        for (const a of args.filter((a) => groups.has(a))) console.log(`${a}: ${groups.get(a)!.join(', ')}`);
      }
      outputs.push(await runAva(args, { ...env, TOOLSHED_TEST_LANE: '' }, tree));
    } else {
      const plan = await planOf(WAITING, process.env.TOOLSHED_TEST_GROUPS !== '0');
      groups = plan.groups;
      await writeGroups(tree, groups);
      for (const [name, files] of groups) console.log(`${name}: ${files.join(', ')}`);
      // A lane runs its own files in one ava process, then chunks of the tail (a process each) until the tail is empty.
      const lane = async (name: string, files: string[], concurrency: number) => {
        const laneEnv = { ...env, TOOLSHED_TEST_LANE: name };
        outputs.push(await runAva([`--concurrency=${concurrency}`, ...files], laneEnv, tree));
        while (plan.tail.length > 0) {
          const chunk = [plan.tail.shift()!];
          let held = plan.secondsOf(chunk[0]!);
          while (plan.tail.length > 0 && held + plan.secondsOf(plan.tail[0]!) <= TAIL_CHUNK_SECONDS * concurrency) {
            held += plan.secondsOf(plan.tail[0]!);
            chunk.push(plan.tail.shift()!);
          }
          outputs.push(await runAva([`--concurrency=${concurrency}`, ...chunk], laneEnv, tree));
        }
      };
      await Promise.all([lane('main', plan.main, 2), lane('waiting', plan.waiting, WAITING_SLOTS)]);
    }
    const out = outputs.map((o) => o.out).join('\n');
    const code = outputs.every((o) => o.code === 0) ? 0 : outputs.find((o) => o.code !== 0)!.code;
    const count = (re: RegExp) => [...out.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
    // ava prints one ✔ line per passed test and one ✘ line per failed one (it omits the passed total on failure).
    const passed = (out.match(/^\s*✔/gm) ?? []).length;
    let failed = (out.match(/^\s*✘/gm) ?? []).length + count(/^\s*(\d+) uncaught exceptions?/gm) + count(/^\s*(\d+) unhandled rejections?/gm);
    if (code !== 0 && failed === 0) failed = 1; // ava failed before counting (e.g. a file that did not load)
    await reportFileTimes(started, timesFile, args.length === 0, ticksAtStart, pg.dir, groups);
    reportFailures(outputs);
    console.log(`\ntest run took ${Math.round((Date.now() - started) / 1000)} s`);
    const skipped = (out.match(/^\s*- \[skip\]/gm) ?? []).length;
    console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
    return code;
  } finally {
    await pg.server?.stop();
    if (pg.dir) await fs.rm(pg.dir, { recursive: true, force: true });
    await fs.rm(cacheDir, { recursive: true, force: true });
    await fs.rm(rootfsDir, { recursive: true, force: true });
    await fs.rm(timesDir, { recursive: true, force: true });
    await fs.rm(tree, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
