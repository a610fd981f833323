/**
 * Offline scenario generation: concrete prompts built from the tools' names, descriptions, schemas and health
 * examples, cycling tools, phrasings and values so that a regeneration (`attempt`) differs, and skipping anything
 * exactly or nearly like a prompt to avoid (by the offline embeddings). Each prompt names its tool and quotes its
 * values, so the offline agent can run it.
 */
import { tokenize } from '../search/text.js';
import { embedText } from './offline-embedding.js';
import { phraseValues, scenarioValues, type ScenarioTool } from './offline-scenario-values.js';
import type { GeneratedScenario, GenerateScenariosInput } from './provider.js';
import { cosine } from './similarity.js';

/** Single sentences on purpose: the offline agent reads a new sentence as a possible second request. */
const TEMPLATES: ((name: string, verb: string, args: string) => string)[] = [
  (name, verb, args) => `Use ${name} to ${verb} for ${args}.`,
  (name, verb, args) => `Can you ${verb} with ${name}, given ${args}?`,
  (name, verb, args) => `I need ${name} to ${verb}, with ${args}.`,
  (name, _verb, args) => `Please run ${name} on ${args} and tell me the result.`,
  (name, verb, args) => `${capitalize(verb)} using ${name}, given ${args}.`,
];

/** Near-duplicate thresholds, tried in turn until enough prompts are found; exact duplicates are never allowed. */
const THRESHOLDS = [0.7, 0.85, 0.95, 1.01];
const VARIANTS = 4;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function imperative(word: string): string {
  const w = word.toLowerCase();
  if (/ies$/.test(w)) return w.slice(0, -3) + 'y';
  if (/(ch|sh|ss|x|z)es$/.test(w)) return w.slice(0, -2);
  if (/[^s]s$/.test(w)) return w.slice(0, -1);
  return w;
}

/** "Converts a title or any text into a URL-friendly slug: strips…" → "convert a title or any text into a URL-friendly slug". */
export function verbPhrase(description: string): string {
  const clause = description.split(/\s*[(:;]|\.\s|\s[—–-]\s/)[0].replace(/\.$/, '').trim();
  const words = clause.split(/\s+/).filter(Boolean);
  if (words.length === 0) return 'do its job';
  let i = /ly$/i.test(words[0]) && words.length > 1 ? 1 : 0;
  if (i === 1) words[0] = words[0].toLowerCase();
  words[i] = imperative(words[i]);
  if (/^(or|and)$/i.test(words[i + 1] ?? '') && words[i + 2]) words[i + 2] = imperative(words[i + 2]);
  let cut = words.slice(0, 14);
  if (words.length > 14) {
    const comma = cut.map((w) => w.endsWith(',')).lastIndexOf(true);
    if (comma > 3) cut = cut.slice(0, comma + 1);
  }
  return cut.join(' ').replace(/,$/, '');
}

function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

function tagsFor(tool: ScenarioTool): string[] {
  const words = tokenize(tool.description).filter((w) => w.length > 3 && !/^\d+$/.test(w));
  return [tool.name, ...new Set(words.slice(1, 3))];
}

function build(tool: ScenarioTool, template: number, variant: number): GeneratedScenario {
  const values = scenarioValues(tool, variant);
  const verb = verbPhrase(tool.description);
  const args = phraseValues(tool, values);
  const prompt = TEMPLATES[template](tool.name, verb, args).replace(/\s+([.?,])$/, '$1');
  const first = Object.values(values).find((v) => typeof v === 'string' || typeof v === 'number');
  const name = truncate(`${tool.name}: ${first !== undefined ? String(first).replace(/\s+/g, ' ') : verb}`, 60);
  return {
    prompt,
    name,
    description: `Checks that the agent uses ${tool.name} to ${verb} and answers from its output.`,
    tags: tagsFor(tool),
  };
}

/** Candidates in the order they are tried: tools in turn, phrasings and values rotating, all shifted by attempt. */
function* candidates(tools: ScenarioTool[], count: number, attempt: number): Generator<GeneratedScenario> {
  const n = tools.length;
  const total = n * VARIANTS * TEMPLATES.length;
  for (let j = 0; j < total; j++) {
    const round = Math.floor(j / n);
    const tool = tools[(j + attempt * count) % n];
    const variant = (round + attempt) % VARIANTS;
    const template = (j + 2 * attempt + round) % TEMPLATES.length;
    yield build(tool, template, variant);
  }
}

export function generateOfflineScenarios(input: GenerateScenariosInput): GeneratedScenario[] {
  if (input.tools.length === 0 || input.count < 1) return [];
  const avoid = input.avoid.map((p) => ({ key: p.trim().toLowerCase(), vec: embedText(p) }));
  const pool = [...candidates(input.tools, input.count, Math.max(0, input.attempt))].map((s) => ({ s, vec: embedText(s.prompt) }));
  const picked: typeof pool = [];
  for (const threshold of THRESHOLDS) {
    for (const c of pool) {
      if (picked.length >= input.count) break;
      const key = c.s.prompt.toLowerCase();
      if (picked.includes(c) || avoid.some((a) => a.key === key) || picked.some((p) => p.s.prompt.toLowerCase() === key)) continue;
      const near = [...avoid, ...picked].some((o) => cosine(o.vec, c.vec) > threshold);
      if (!near) picked.push(c);
    }
  }
  return picked.map((p) => p.s);
}
