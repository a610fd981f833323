/**
 * A key said in words: a server that wants its key without naming its variable (@shortcut/mcp: "A Shortcut api token
 * is required") is given the credentials its code reads (`process.env.SHORTCUT_API_TOKEN`): those whose words the error
 * says if any, else all (at most three); required when there is one, else optional (either may do).
 */
import { variablesOf as variablesOfCode } from '../../env-named.js';
import type { StartupRule } from './types.js';

/** A start-up error about a missing key in words (`A Shortcut api token is required`, `No API key provided`). */
export const WANTS_CREDENTIAL =
  /\b(?:token|api[ _-]?key|key|secret|password|credentials?)\b[^.\n]{0,60}\b(?:required|missing|not (?:set|provided|given|configured|defined|found))\b|\bno (?:api[ _-]?)?(?:token|key|credentials?)\b[^.\n]{0,20}\b(?:provided|given|set|found)\b/i;

export const keyInWords: StartupRule = {
  name: 'key-in-words',
  answers: 'a server that exited wanting a key in words: the credentials its code reads are declared (required when one), secret',
  next: ({ last, code }) => {
    const message = last?.message ?? '';
    if (last?.outcome !== 'exited' || !WANTS_CREDENTIAL.test(message)) return undefined;
    const read = variablesOfCode(
      code.envRead,
      last.env.map((v) => v.name),
    ).filter((v) => v.secret);
    const words = new Set(message.toLowerCase().split(/[^a-z0-9]+/));
    const said = read.filter((v) =>
      v.name
        .toLowerCase()
        .split('_')
        .every((w) => words.has(w)),
    );
    const names = (said.length > 0 ? said : read).slice(0, 3);
    if (names.length === 0) return undefined;
    const description = 'read by its code: the server would not start without its key';
    const declared = names.map(({ name }) => ({ name, required: names.length === 1, secret: true, description }));
    return {
      attempt: { args: last.args, env: [...last.env, ...declared] },
      why: `it wants a key in words; its code reads ${names.map((v) => v.name).join(', ')}`,
      declared,
    };
  },
};
