/**
 * `npx tsx bench/acct-tree.ts <acct file> [chain length] [rows]`: where a run's CPU went, by process ancestry, from
 * the kernel's process accounting (Debian's `acct`: `touch f && accton f; CI=true bash .ci/run; accton off`). Unlike
 * a sampler it counts every process, also those that live a few ms (process-sandbox guests, `runsc` commands).
 * Each exited process is one 64-byte `acct_v3` record (linux/acct.h: pid, ppid, start second, elapsed and CPU in
 * ticks as `comp_t`, the command's first 15 bytes). A parent is the record with the child's ppid whose life covers
 * the child's start, because a run reuses pids. Prints one JSON line: the total, and the CPU seconds and process
 * counts of the heaviest ancestry chains (the last `chain length` commands of each, default 9).
 */
import fs from 'node:fs';

interface Rec {
  i: number;
  pid: number;
  ppid: number;
  comm: string;
  cpu: number;
  start: number;
  end: number;
}

/** `comp_t`: a 13-bit mantissa and a 3-bit base-8 exponent. */
const comp = (c: number) => (c & 0x1fff) << (3 * (c >> 13));
const TICKS = 100;

const [file, chainArg, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: npx tsx bench/acct-tree.ts <acct file> [chain length] [rows]');
const chainLength = Number(chainArg ?? 9);
const rows = Number(rowsArg ?? 30);

const data = fs.readFileSync(file);
const recs: Rec[] = [];
const byPid = new Map<number, Rec[]>();
for (let off = 0; off + 64 <= data.length; off += 64) {
  if (data.readUInt8(off + 1) !== 3) continue; // ac_version
  const start = data.readUInt32LE(off + 24);
  const rec: Rec = {
    i: recs.length,
    pid: data.readUInt32LE(off + 16),
    ppid: data.readUInt32LE(off + 20),
    comm: data
      .subarray(off + 48, off + 64)
      .toString('latin1')
      .split('\0')[0]!,
    cpu: (comp(data.readUInt16LE(off + 32)) + comp(data.readUInt16LE(off + 34))) / TICKS,
    start,
    end: start + data.readFloatLE(off + 28) / TICKS,
  };
  recs.push(rec);
  byPid.set(rec.pid, [...(byPid.get(rec.pid) ?? []), rec]);
}

function parentOf(rec: Rec): Rec | undefined {
  let best: Rec | undefined;
  for (const p of byPid.get(rec.ppid) ?? []) {
    // Start seconds are whole: a second of slack either way.
    if (p !== rec && p.start <= rec.start + 1 && p.end >= rec.start - 1 && (!best || p.start > best.start)) best = p;
  }
  return best;
}

function chainOf(rec: Rec): string[] {
  const out: string[] = [];
  const seen = new Set<number>();
  for (let r: Rec | undefined = rec; r && !seen.has(r.i) && out.length < 30; r = parentOf(r)) {
    seen.add(r.i);
    out.push(r.comm);
  }
  return out.reverse();
}

const groups = new Map<string, { cpu: number; processes: number }>();
for (const rec of recs) {
  const key = chainOf(rec).slice(-chainLength).join(' > ');
  const g = groups.get(key) ?? { cpu: 0, processes: 0 };
  g.cpu += rec.cpu;
  g.processes++;
  groups.set(key, g);
}
const round = (x: number) => Math.round(x * 10) / 10;
console.log(
  JSON.stringify({
    bench: 'acct-tree',
    processes: recs.length,
    cpu_s: round(recs.reduce((s, r) => s + r.cpu, 0)),
    chains: [...groups]
      .sort((a, b) => b[1].cpu - a[1].cpu)
      .slice(0, rows)
      .map(([chain, g]) => ({ chain, cpu_s: round(g.cpu), processes: g.processes })),
  }),
);
