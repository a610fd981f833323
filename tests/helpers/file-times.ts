/**
 * Where a test run's time goes, per file. `npm test` preloads this module (`--import`) into every ava test process:
 * at exit it appends one JSON line to `TOOLSHED_TEST_TIMES` — the test file, its lane, its wall time from process
 * start and its end, its own CPU and that of the child processes it waited for (gVisor, Chromium, npm, guests: Linux counts a
 * child's CPU when it is reaped) — and tests/run.ts prints the slowest files before its summary. Nothing is recorded
 * when the variable is unset (ava run by hand).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The file ava gave this process: the worker's options, held by ava's own options module (the same CJS instance). */
function testFile(): string | undefined {
  try {
    const require = createRequire(path.join(process.cwd(), 'package.json'));
    const options = require(path.join(path.dirname(require.resolve('ava')), '..', 'lib', 'worker', 'options.cjs'));
    return path.relative(process.cwd(), options.get().file);
  } catch {
    return undefined;
  }
}

/** CPU seconds of the children this process has reaped (`/proc/self/stat` fields cutime and cstime, clock ticks). */
function childrenCpu(): number {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

const out = process.env.TOOLSHED_TEST_TIMES;
if (out) {
  process.once('exit', () => {
    const file = testFile();
    if (!file) return;
    const cpu = process.cpuUsage();
    const line = {
      file: file.replace(/\.test\.js$/, '.test.ts'),
      lane: process.env.TOOLSHED_TEST_LANE ?? '',
      wall: Math.round(performance.now()) / 1000,
      cpu: Math.round((cpu.user + cpu.system) / 1000) / 1000,
      children: childrenCpu(),
      // When it ran (epoch seconds): where the run's cores were idle (tests/run.ts prints the gaps).
      end: Math.round(Date.now()) / 1000,
    };
    try {
      fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
    } catch {
      // a report, never a reason for a test file to fail
    }
  });
}
