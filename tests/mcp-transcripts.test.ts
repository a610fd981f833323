/**
 * The start-up rules of an MCP server import (worker/import/mcp-rules/) against real start-up transcripts
 * (tests/fixtures/mcp-transcripts/*.json, recorded in gVisor by bench/record-mcp-transcripts.ts): each is replayed
 * through the import's driver without a sandbox, in milliseconds. The driver must make the very starts the server was
 * started with (arguments, variables given, where it ran), in order, fire the rules recorded, declare the variables
 * recorded, and end as recorded (listed, or refused with the code recorded), within the budget of starts.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR } from './helpers/service.js';
import { MAX_STARTS, runStartup } from '../worker/import/mcp-startup.js';
import { REFUSAL_MESSAGES, refusalFacts, refusalOf } from '../worker/import/mcp-refusals.js';
import { STARTUP_RULES, type AttemptRecord, type PackageCode } from '../worker/import/mcp-rules/index.js';
import type { McpEnvVar } from '../core/packages/mcp-server.js';

interface Transcript {
  server: string;
  imitates?: string;
  planned: { args: string[]; env: McpEnvVar[] };
  code: PackageCode;
  starts: (Omit<AttemptRecord, 'env'> & { env: string[] })[];
  expect: { rules: string[]; outcome: AttemptRecord['outcome']; refusal?: string; declared: string[] };
}

const DIR = path.join(FIXTURES_DIR, 'mcp-transcripts');
const transcripts = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f.replace(/\.json$/, ''), JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as Transcript] as const);
const key = (a: { args: string[]; env: string[]; inGuest: boolean }) => JSON.stringify([a.args, [...a.env].sort(), a.inGuest]);

/** The driver on a transcript: each start answered as the server answered it then. */
async function replay(t: Transcript) {
  const recorded = new Map(t.starts.map((s) => [key(s), s]));
  const made: string[] = [];
  const run = await runStartup({
    planned: t.planned,
    code: t.code,
    budget: MAX_STARTS - 1,
    start: async (a) => {
      const k = key({ ...a, env: a.env.map((v) => v.name) });
      made.push(k);
      const s = recorded.get(k);
      if (!s) throw new Error(`a start the server was never started with: ${k}`);
      return { ...s, ...a };
    },
  });
  return { run, made };
}

test('the transcripts cover every rule, real servers and the fixture modes that imitate real packages', (t) => {
  t.true(transcripts.length >= 15);
  const fired = new Set(transcripts.flatMap(([, x]) => x.expect.rules));
  t.deepEqual(
    STARTUP_RULES.map((r) => r.name).filter((n) => !fired.has(n)),
    [],
    'every rule fires in some transcript',
  );
  t.true(
    transcripts.some(([, x]) => x.expect.outcome !== 'listed'),
    'refusals too',
  );
});

/**
 * What the 400 says, from the start that stands, for the refusals tests/mcp-hostile.test.ts no longer boots gVisor
 * for (the words are the sandbox's, recorded in gVisor): each must match, and none of `not`.
 */
const REFUSED: Record<string, { says: RegExp[]; not?: RegExp }> = {
  'cli-fails': {
    says: [
      /^The MCP server could not be started and described \(started with the arguments \["start"\], chosen from what it printed\): .*cannot read mcp\.config\.json/,
    ],
  },
  prints: { says: [/exited \(code 0\) without writing anything to stderr; instead of MCP it printed: my-tool v1\.0 \| run me with --serve/] },
  crashes: { says: [/Error: cannot read the configuration file config\.json/], not: /\bat node:internal|Node\.js v\d/ },
  'usage-error': { says: [/exited \(code 1\): Error: unable to create kubernetes target provider: no current-context is set/] },
  killed: { says: [/exited \(code 137: killed, most likely out of memory\) without writing anything to stderr/] },
  'bad-config': { says: [/exited \(code 1\): Server error: \[ \| .*Service URL cannot be empty/], not: /telemetry/ },
  'needs-network': {
    says: [
      /cannot reach the service: getaddrinfo \w+ api\.fixture-service\.example/,
      /\(it was started without network: .* imports with `network: true` on a service with SANDBOX_NETWORK=egress\)$/,
    ],
  },
};

for (const [name, transcript] of transcripts) {
  test(`transcript ${name} (${transcript.server}${transcript.imitates ? `, as ${transcript.imitates}` : ''}): the recorded starts, rules and end`, async (t) => {
    const { run, made } = await replay(transcript);
    t.deepEqual(made, transcript.starts.map(key), 'the same starts, in order');
    t.deepEqual(
      run.fired.map((f) => f.rule),
      transcript.expect.rules,
    );
    t.deepEqual(
      run.fired.flatMap((f) => f.declared ?? []),
      transcript.expect.declared,
    );
    t.is(run.final.outcome, transcript.expect.outcome);
    if (run.final.outcome !== 'listed') t.is(refusalOf(run.final) as string | undefined, transcript.expect.refusal);
    t.true(made.length <= MAX_STARTS - 1, 'within the budget (one start kept for the bundle)');
    for (const f of run.fired) t.true(f.why.length > 0, `${f.rule} says why`);
    const refused = REFUSED[name];
    if (refused) {
      const message = REFUSAL_MESSAGES[refusalOf(run.final)](refusalFacts(run.final, transcript.planned.args, { describeMs: 30_000, offline: 'not_asked' }));
      for (const re of refused.says) t.regex(message, re);
      if (refused.not) t.notRegex(message, refused.not);
    }
  });
}

test('a server that names a new variable on every start is started at most the budget’s times, and the record says the budget ran out', async (t) => {
  let n = 0;
  const run = await runStartup({
    planned: { args: [], env: [] },
    code: { launcher: false, envRead: [] },
    budget: MAX_STARTS - 1,
    start: async (a) => ({ ...a, outcome: 'exited', message: `the MCP server exited (code 1): SERVICE_KEY_${n++}_TOKEN environment variable is required` }),
  });
  t.is(n, MAX_STARTS - 1);
  t.true(run.spent);
  t.is(refusalOf(run.final), 'exited');
});
