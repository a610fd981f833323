/**
 * Builds the benign corpus of bench/poisoning.ts (tests/fixtures/security/poisoning/benign.json): real tool
 * definitions, each with where it came from. Sources: the example packages in examples/tools (their exports), the MCP
 * servers and AI SDK tools pinned in devDependencies, the tools/list of real MCP servers recorded from npm
 * (HARVEST_DIR: JSON files written by a tools/list client, one per server, as described in docs/security.md), and the
 * MetaTool dataset's 199 tool descriptions (../shared/datasets/metatool). Run: `npx tsx bench/poisoning-corpus.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Entry {
  package: string;
  source: string;
  tool: { name: string; title?: string; description: string; inputSchema?: unknown; annotations?: Record<string, unknown> };
}
const root = path.resolve(import.meta.dirname, '..');
const out: Entry[] = [];

async function examples() {
  const dir = path.join(root, 'examples/tools');
  for (const name of fs.readdirSync(dir)) {
    const pj = JSON.parse(fs.readFileSync(path.join(dir, name, 'package.json'), 'utf8'));
    const mod = await import(pathToFileURL(path.join(dir, name, pj.main ?? 'index.js')).href);
    for (const [exportName, value] of Object.entries(mod)) {
      const t = value as { description?: string; inputSchema?: { jsonSchema?: unknown } };
      if (!t || typeof t.description !== 'string') continue;
      out.push({
        package: pj.name,
        source: `examples/tools/${name} (export ${exportName})`,
        tool: { name: exportName, description: t.description, inputSchema: t.inputSchema?.jsonSchema ?? t.inputSchema },
      });
    }
  }
}

function harvested() {
  const dir = process.env.HARVEST_DIR;
  if (!dir) return;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const h = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    for (const t of h.tools)
      out.push({
        package: h.package,
        source: h.source,
        tool: { name: t.name, title: t.title, description: t.description ?? '', inputSchema: t.inputSchema, annotations: t.annotations },
      });
  }
}

function metatool() {
  const file = path.join(root, '../shared/datasets/metatool/plugin_des.json');
  const des = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  for (const [name, description] of Object.entries(des))
    out.push({ package: 'metatool', source: 'MetaTool plugin_des.json (HowieHwong/MetaTool)', tool: { name, description } });
}

await examples();
harvested();
metatool();
// Earlier recordings stay unless re-recorded (a server not reachable now keeps its recorded tools).
const target = path.join(root, 'tests/fixtures/security/poisoning/benign.json');
const before: Entry[] = fs.existsSync(target) ? JSON.parse(fs.readFileSync(target, 'utf8')).tools : [];
const have = new Set(out.map((e) => e.package));
const kept = before.filter((e) => !have.has(e.package));
const all = [...kept, ...out];
const about =
  'Real tool definitions (benign corpus of bench/poisoning.ts), each with its package and where it was recorded; built by bench/poisoning-corpus.ts.';
// One tool a line: a re-recording's diff shows which tools changed.
fs.writeFileSync(target, `{"about": ${JSON.stringify(about)},\n"tools": [\n${all.map((e) => JSON.stringify(e)).join(',\n')}\n]}\n`);
console.log(JSON.stringify({ tools: all.length, packages: new Set(all.map((e) => e.package)).size }));
process.exit(0);
