/**
 * Concrete inputs for offline scenario generation: a tool's health example first, then values made up from its
 * schema (the examples its descriptions quote, enum values, numbers in range, sample texts by kind), and the way to
 * write them into a prompt so that the offline agent reads them back (strings quoted, enums and numbers after their
 * parameter's name, JSON inline).
 */
import { describeParam, nameWords, typeOf, type Schema } from './params.js';
import type { GenerateScenariosInput } from '../provider.js';

export type ScenarioTool = GenerateScenariosInput['tools'][number];

const SAMPLES = {
  text: [
    'The quick brown fox jumps over the lazy dog.',
    'Hello, World! Ça va?',
    'Release notes for version 2.4: faster search and fewer bugs.',
    'Data pipelines move data. Good pipelines validate data carefully.',
  ],
  url: ['https://example.com/docs/getting-started?lang=en#intro', 'https://api.example.com/v1/users/42?fields=name,email'],
  email: ['jane.doe@example.com', 'ops+alerts@example.org'],
  datetime: ['2024-03-15', '2025-01-01T09:30:00Z', '2024-02-29'],
  duration: ['P1M', 'PT36H', 'P2W'],
  uuid: ['c232ab00-9414-11ec-b3c8-9f6bdeced846', '0190b7c2-8d3e-7a4b-9c1d-2e3f4a5b6c7d'],
  numbers: [5, 10, 3, 42, 100],
  strings: [
    ['alpha', 'beta', 'gamma'],
    ['red', 'green'],
  ],
  numberLists: [
    [120, 85, 240, 95, 310],
    [12.5, 8, 30, 14],
  ],
  objects: [
    { id: 1, name: 'Ann', active: true },
    { id: 2, name: 'Bob', city: 'Paris' },
  ],
};

const pick = <T>(list: T[], k: number): T => list[k % list.length];

/** Quoted examples a description gives ("e.g. \"#1e90ff\""), which are valid inputs by the author's word. */
function quotedExamples(description: string): string[] {
  return [...description.matchAll(/"([^"]+)"|“([^”]+)”/g)].map((m) => m[1] ?? m[2]).filter((e) => !/\.\.\.|…|<[^>]*>|xxx|^\s|\s$|^(now|true|false)$/i.test(e));
}

function numberExamples(description: string): number[] {
  const eg = /e\.g\.([^.;)]*)/i.exec(description)?.[1] ?? '';
  return [...eg.matchAll(/\b\d+(?:\.\d+)?\b/g)].map((m) => Number(m[0]));
}

function inRange(s: Schema, v: number): boolean {
  if ((s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum)) return false;
  return !((s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) || (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum));
}

function makeNumber(s: Schema, k: number): number {
  const options = [...numberExamples(String(s.description ?? '')), ...SAMPLES.numbers]
    .map((n) => (typeOf(s) === 'integer' ? Math.round(n) : n))
    .filter((n) => inRange(s, n));
  if (options.length) return pick(options, k);
  return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
}

/** A made-up value for one parameter; k varies it. */
function makeValue(key: string, s: Schema, k: number): unknown {
  if (Array.isArray(s.enum) && s.enum.length) return pick(s.enum, k);
  const type = typeOf(s);
  if (type === 'number' || type === 'integer') return makeNumber(s, k);
  if (type === 'boolean') return s.default ?? true;
  if (type === 'array') {
    const items = typeOf(s.items ?? {});
    if (items === 'string') return pick(SAMPLES.strings, k);
    if (items === 'number' || items === 'integer') return pick(SAMPLES.numberLists, k);
    return SAMPLES.objects;
  }
  if (type === 'object' || type === undefined) return pick(SAMPLES.objects, k);
  const examples = quotedExamples(String(s.description ?? ''));
  if (examples.length) return pick(examples, k);
  const kind = describeParam(key, s, true).kind;
  return pick(kind === 'text' ? SAMPLES.text : SAMPLES[kind], k);
}

/**
 * The k-th input for a tool, always starting from its health example (values known to work): k = 0 is the example
 * itself; k ≥ 1 replace required strings by the examples their descriptions quote (the k-th one), and odd k also set
 * one optional enum to a non-default value. Parameters the example lacks are made up from the schema.
 */
export function scenarioValues(tool: ScenarioTool, k: number): Record<string, unknown> {
  const props: Record<string, Schema> = (tool.inputSchema.properties as Record<string, Schema>) ?? {};
  const required: string[] = (tool.inputSchema.required as string[]) ?? [];
  const values: Record<string, unknown> = structuredClone(tool.healthExample?.params ?? {});
  for (const key of required) {
    if (!props[key]) continue;
    const own = typeOf(props[key]) === 'string' && !props[key].enum ? quotedExamples(String(props[key].description ?? '')) : [];
    const examples = own.filter((e) => e !== values[key]);
    if (k > 0 && examples.length) values[key] = pick(examples, k - 1);
    else if (!(key in values)) values[key] = makeValue(key, props[key], k);
  }
  // Enums about how the input is read (inputEncoding, a CSV delimiter) would no longer fit the example's values.
  const aboutInput = (key: string) => /input|delimiter|read|pars/i.test(`${key} ${props[key].description ?? ''}`);
  const enums = Object.keys(props).filter((key) => !required.includes(key) && Array.isArray(props[key].enum) && !aboutInput(key));
  if (enums.length && k % 2 === 1) {
    const key = pick(enums, Math.floor(k / 2));
    const options = props[key].enum.filter((v: unknown) => v !== props[key].default && v !== values[key]);
    if (options.length) values[key] = pick(options, Math.floor(k / 2));
  }
  return values;
}

/** A string in quotes that do not occur in it, so the agent can read it back whole. */
export function quote(value: string): string {
  for (const [open, close] of [
    ['"', '"'],
    ['“', '”'],
    ["'", "'"],
    ['`', '`'],
  ]) {
    if (!value.includes(open) && !value.includes(close)) return `${open}${value}${close}`;
  }
  return `\n\`\`\`\n${value}\n\`\`\`\n`;
}

/** How one parameter and its value are written: `text "Hello"`, `length 16`, `algorithm sha512`, `without symbols`. */
function phrase(key: string, s: Schema | undefined, value: unknown): string {
  const label = nameWords(key).join(' ');
  if (typeof value === 'boolean') return `${value ? 'with' : 'without'} ${label}`;
  if (typeof value === 'number') return `${label} ${value}`;
  if (typeof value === 'string') {
    const enumWord = Array.isArray(s?.enum) && value.replace(/[^\p{L}\p{N}]/gu, '').length >= 2;
    return `${label} ${enumWord ? value : quote(value)}`;
  }
  return `${label} ${JSON.stringify(value)}`;
}

/** All parameters written out: `foreground "#000000" and background "#ffffff"`. */
export function phraseValues(tool: ScenarioTool, values: Record<string, unknown>): string {
  const props = (tool.inputSchema.properties as Record<string, Schema>) ?? {};
  const parts = Object.entries(values).map(([key, v]) => phrase(key, props[key], v));
  if (parts.length === 0) return 'the default settings';
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}
