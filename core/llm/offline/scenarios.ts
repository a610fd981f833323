/**
 * Offline scenario generation: concrete prompts built from the tools' names, descriptions, schemas and health
 * examples, cycling tools, phrasings and values so that a regeneration (`attempt`) differs, and skipping anything
 * exactly or nearly like a prompt to avoid (by the offline embeddings). Each prompt names its tool and quotes its
 * values, so the offline agent can run it.
 */
import { SEARCH_STOP_WORDS } from '../../search/analyzer.js';
import { embedText } from './embedding.js';
import { phraseValues, scenarioValues, type ScenarioTool } from './scenario-values.js';
import type { GeneratedScenario, GenerateScenariosInput } from '../provider.js';
import { cosine } from '../similarity.js';
import { cutAtWord } from '../../text/text-cut.js';

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
  const clause = description
    .split(/\s*[(:;]|\.\s|\s[—–-]\s/)[0]
    .replace(/\.$/, '')
    .trim();
  const words = clause.split(/\s+/).filter(Boolean);
  if (words.length === 0) return 'do its job';
  const i = /ly$/i.test(words[0]) && words.length > 1 ? 1 : 0;
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

const truncate = (s: string, max: number) => cutAtWord(s, max, null);

/** Description words too general to tag with. */
const GENERAL = new Set(
  'about against also between each every from given into like more only other over such than that their them then these this those through under using value values when where which while whose with within without'.split(
    ' ',
  ),
);

/** The tool's name, then two topic words from its description (after its verb). */
function tagsFor(tool: ScenarioTool): string[] {
  const words = (tool.description.toLowerCase().match(/\p{L}+/gu) ?? []).slice(1);
  const topical = words.filter((w) => w.length >= 4 && !SEARCH_STOP_WORDS.has(w) && !GENERAL.has(w));
  return [tool.name, ...new Set(topical)].slice(0, 3);
}

function build(tool: ScenarioTool, template: number, variant: number): GeneratedScenario {
  const values = scenarioValues(tool, variant);
  const verb = verbPhrase(tool.description);
  const args = phraseValues(tool, values);
  const prompt = TEMPLATES[template](tool.name, verb, args).replace(/\s+([.?,])$/, '$1');
  const shown = Object.values(values)
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .slice(0, 3);
  const name = truncate(`${tool.name}: ${shown.length ? shown.join(', ').replace(/\s+/g, ' ') : verb}`, 60);
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
  // Enough value variants for the count asked, even from a single tool.
  const variants = Math.min(12, Math.max(4, Math.ceil((2 * count) / n)));
  const total = n * variants * TEMPLATES.length;
  for (let j = 0; j < total; j++) {
    const round = Math.floor(j / n);
    const tool = tools[(j + attempt * count) % n];
    const variant = (round + attempt) % variants;
    const template = (j + 2 * attempt + round) % TEMPLATES.length;
    yield build(tool, template, variant);
  }
}

export function generateOfflineScenarios(input: GenerateScenariosInput): GeneratedScenario[] {
  if (input.tools.length === 0 || input.count < 1) return [];
  const avoid = input.avoid.map((p) => ({ key: p.trim().toLowerCase(), vec: embedText(p) }));
  // Candidates are built and embedded lazily: the first pass usually needs only the first few.
  const source = candidates(input.tools, input.count, Math.max(0, input.attempt));
  const pool: { s: GeneratedScenario; key: string; vec: number[] }[] = [];
  const at = (i: number) => {
    while (pool.length <= i) {
      const next = source.next();
      if (next.done) return undefined;
      pool.push({ s: next.value, key: next.value.prompt.toLowerCase(), vec: embedText(next.value.prompt) });
    }
    return pool[i];
  };
  const picked: typeof pool = [];
  for (const threshold of THRESHOLDS) {
    for (let i = 0; picked.length < input.count; i++) {
      const c = at(i);
      if (!c) break;
      if (picked.includes(c) || avoid.some((a) => a.key === c.key) || picked.some((p) => p.key === c.key)) continue;
      if (![...avoid, ...picked].some((o) => cosine(o.vec, c.vec) > threshold)) picked.push(c);
    }
  }
  return picked.map((p) => p.s);
}
