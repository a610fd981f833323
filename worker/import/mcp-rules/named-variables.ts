/**
 * The variables its error names: a server that would not start names the variables it wanted (`AIRTABLE_API_KEY
 * environment variable is required`); those it was not given are declared for it, with a placeholder while it is
 * described, and it starts once more (a server that checks its variables one at a time, @niledatabase/nile-mcp-server,
 * names the next: NILE_API_KEY, then NILE_WORKSPACE_SLUG). Callers then pass them per call. Once it was given
 * placeholders for either of two ways (`Either CONTENTFUL_MANAGEMENT_ACCESS_TOKEN or PRIVATE_KEY`), what it names next
 * may belong to one way only (`APP_ID is required when using PRIVATE_KEY`): optional.
 */
import { PLACEHOLDER_URL, type McpEnvVar } from '../../../core/packages/mcp-server.js';
import type { RuleContext, StartupRule } from './types.js';

export const namedVariables: StartupRule = {
  name: 'named-variables',
  answers:
    'a server that exited naming variables it was not given: they are declared (required unless an "or" stands among them) and it starts with placeholders',
  next: (ctx) => {
    const { last } = ctx;
    if (last?.outcome !== 'exited') return undefined;
    const wanted = undeclaredVariables(last.message ?? '', last.env, eitherWay(ctx));
    if (wanted.length === 0) return undefined;
    return {
      attempt: { args: last.args, env: [...last.env, ...wanted] },
      why: `its error names ${wanted.map((v) => v.name).join(', ')}`,
      declared: wanted,
    };
  },
};

/** Whether an earlier start was given placeholders for either of two ways (several named, all optional). */
function eitherWay(ctx: RuleContext): boolean {
  return ctx.history.some(({ record, chosenBy }) => {
    if (chosenBy?.rule !== 'named-variables' || (chosenBy.declared?.length ?? 0) < 2) return false;
    return record.env.filter((v) => chosenBy.declared!.includes(v.name)).every((v) => !v.required);
  });
}

/** Names of credentials and addresses (`…_API_KEY`, `…_TOKEN`, `…_SECRET`, `…_PASSWORD`, `…_URL`) a server's start-up error names. */
const WANTED_VARIABLE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PAT|URL)\b/g;
/** Any variable-like name (`UPSTASH_EMAIL`): taken only from an error that speaks of environment variables. */
const ANY_VARIABLE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;
const SPEAKS_OF_ENV = /\benv(?:ironment)?\b/i;
/** A part of a name that makes its value a secret (`LARA_ACCESS_KEY_ID`). */
const SECRET_PART = /(?:^|_)(?:KEY|SECRET|TOKEN|PASSWORD|PAT)(?:_|$)/;
/** A name said to be wanted: `APP_ID is required`, `SPACE_ID must be set`, `TEAM_ID is missing`. */
const SAID_WANTED =
  /\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s+(?:(?:is|are)\s+(?:required|missing|empty|not (?:set|defined|provided|given))|must be\s+(?:set|provided|defined|specified))\b/g;
/** Capitalised names in errors that are not variables: Node's error codes (`ERR_…`, `MODULE_NOT_FOUND`). */
const NOT_A_VARIABLE = /^(?:ERR|NODE|E)_|^MODULE_|_NOT_FOUND$/;

/**
 * The variables a server's start-up error names that are not declared yet (at most five), as declarations: required
 * when it names one or names several together (`Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID`: a call without either
 * cannot work); optional when an "or" stands among them (`GITHUB_TOKEN or GH_TOKEN`: a caller passing either must not
 * be refused; the server says what it misses). All are optional when `optional` (named after an either-or).
 */
export function undeclaredVariables(message: string, declared: McpEnvVar[], optional = false): McpEnvVar[] {
  const known = new Set(declared.map((v) => v.name));
  const credentials = new Set(message.match(WANTED_VARIABLE) ?? []);
  const aboutEnv = SPEAKS_OF_ENV.test(message);
  // A name beside a credential of the same service (`LARA_ACCESS_KEY_ID and LARA_ACCESS_KEY_SECRET must be set`) is one
  // too, and so is a name said to be wanted (`APP_ID is required when using PRIVATE_KEY`).
  const services = new Set([...credentials].map((n) => n.split('_')[0]));
  // Neither is a file's path (BRAVE_API_KEY_FILE beside BRAVE_API_KEY): a placeholder there is a file that does not exist.
  const aPath = (n: string) => /_(?:FILE|FILENAME|PATH|DIR|DIRECTORY)$/.test(n);
  const sibling = (n: string) => services.has(n.split('_')[0]!) && !aPath(n);
  const said = new Set([...message.matchAll(SAID_WANTED)].map((m) => m[1]!).filter((n) => !aPath(n)));
  const named = (message.match(ANY_VARIABLE) ?? []).filter((n) => credentials.has(n) || ((aboutEnv || sibling(n) || said.has(n)) && !NOT_A_VARIABLE.test(n)));
  const names = [...new Set(named)].filter((n) => !known.has(n)).slice(0, 5);
  const at = names.map((n) => new RegExp(`\\b${n}\\b`).exec(message)!.index);
  const among = message.slice(Math.min(...at), Math.max(...at));
  const required = !optional && (names.length === 1 || !/\bor\b|\|/i.test(among));
  const description = 'named by the server when it would not start';
  return names.map((name) =>
    name.endsWith('_URL')
      ? { name, required, description, default: PLACEHOLDER_URL }
      : { name, required, ...(credentials.has(name) || SECRET_PART.test(name) ? { secret: true } : {}), description },
  );
}
