/**
 * Tool-poisoning detection (core/packages/poisoning.ts) measured: detected/total on the poisoned examples written from
 * published attacks (tuning half and the held-out half written after the rules were set), and false alarms/total on
 * real tool definitions (benign.json: tools, and packages with at least one flagged tool). One JSON line.
 * `npm run bench:poisoning`; `BENCH_VERBOSE=1` lists what was missed and what was flagged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { toolRisks, type ToolText } from '../core/packages/poisoning.js';

const dir = path.resolve(import.meta.dirname, '../tests/fixtures/security/poisoning');
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
const verbose = process.env.BENCH_VERBOSE === '1';

interface Poisoned {
  id: string;
  tool: ToolText;
  otherTools?: string[];
}
interface Benign {
  package: string;
  tool: ToolText;
}

export function detection(examples: Poisoned[]) {
  const missed = examples.filter((e) => toolRisks(e.tool, e.otherTools ?? []).length === 0).map((e) => e.id);
  return { detected: examples.length - missed.length, total: examples.length, rate: round((examples.length - missed.length) / examples.length), missed };
}

export function falseAlarms(tools: Benign[]) {
  // Shadowing is judged against every other package's tool names, as the registry does.
  const byPackage = new Map<string, Set<string>>();
  for (const t of tools) (byPackage.get(t.package) ?? byPackage.set(t.package, new Set()).get(t.package)!).add(t.tool.name);
  const all = new Set(tools.map((t) => t.tool.name));
  const flagged = tools
    .map((t) => {
      const own = byPackage.get(t.package)!;
      const others = [...all].filter((n) => !own.has(n));
      return { package: t.package, name: t.tool.name, risks: toolRisks(t.tool, others) };
    })
    .filter((f) => f.risks.length > 0);
  const packages = new Set(tools.filter((t) => t.package !== 'metatool').map((t) => t.package)).size;
  const flaggedPackages = new Set(flagged.filter((f) => f.package !== 'metatool').map((f) => f.package)).size;
  return {
    falseAlarms: flagged.length,
    total: tools.length,
    rate: round(flagged.length / tools.length),
    packages: { flagged: flaggedPackages, total: packages },
    flagged: flagged.map((f) => `${f.package}/${f.name}: ${f.risks.map((r) => r.detail).join(' | ')}`),
  };
}

const round = (x: number) => Math.round(x * 10000) / 10000;

export function measure() {
  const tune = detection(read('poisoned-tune.json').examples);
  const holdout = detection(read('poisoned-holdout.json').examples);
  const benign: Benign[] = read('benign.json').tools;
  const real = falseAlarms(benign.filter((t) => t.package !== 'metatool'));
  const metatool = falseAlarms(benign.filter((t) => t.package === 'metatool'));
  return { tune, holdout, real, metatool };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const m = measure();
  const brief = (d: ReturnType<typeof detection>) => ({ detected: d.detected, total: d.total, rate: d.rate, ...(verbose ? { missed: d.missed } : {}) });
  const alarms = (f: ReturnType<typeof falseAlarms>) => ({
    falseAlarms: f.falseAlarms,
    total: f.total,
    rate: f.rate,
    packages: f.packages,
    ...(verbose ? { flagged: f.flagged } : {}),
  });
  console.log(
    JSON.stringify({
      bench: 'poisoning',
      poisonedTune: brief(m.tune),
      poisonedHoldout: brief(m.holdout),
      realTools: alarms(m.real),
      metatool: alarms(m.metatool),
    }),
  );
}
