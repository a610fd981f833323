/**
 * `npx tsx bench/startup.ts [--runs=7]`: what loading the API's and the worker's code costs a fresh process (each run
 * is a new `node --import tsx` that imports api/server.ts, then worker/main.ts, and reports the time and CPU it took).
 * Every test file, every `npm start` and every worker an operator scales out pays this once. Prints one JSON line:
 * medians of the wall-clock milliseconds and of the process's CPU milliseconds at the end (tsx's own thread included).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(new URL('..', import.meta.url).pathname);
const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 7);
const probe = `
const t0 = performance.now();
await import(${JSON.stringify(path.join(root, 'api/server.ts'))});
const t1 = performance.now();
await import(${JSON.stringify(path.join(root, 'worker/main.ts'))});
const t2 = performance.now();
const cpu = process.cpuUsage();
console.log(JSON.stringify({ api: t1 - t0, worker: t2 - t1, boot: t0, cpu: (cpu.user + cpu.system) / 1000 }));
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const samples: { api: number; worker: number; boot: number; cpu: number }[] = [];
for (let i = 0; i < runs; i++) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  samples.push(JSON.parse(r.stdout.trim().split('\n').pop()!));
}
const pick = (k: keyof (typeof samples)[0]) => Math.round(median(samples.map((s) => s[k])));
console.log(
  JSON.stringify({
    bench: 'startup',
    runs,
    bootMs: pick('boot'),
    importApiMs: pick('api'),
    importWorkerAfterApiMs: pick('worker'),
    cpuMs: pick('cpu'),
  }),
);
