/**
 * An address it wants: a server that wants an address without naming its variable (@tiberriver256/mcp-server-azure-devops:
 * "Organization URL is required") is given the addresses its code reads from the environment
 * (`process.env.AZURE_DEVOPS_ORG_URL`), at most three, not a tracer's or a proxy's. Optional: which one it wanted is not
 * known (a call without it meets the server's own words).
 */
import { PLACEHOLDER_URL } from '../../../core/packages/mcp-server.js';
import { ADDRESS } from '../../env-named.js';
import type { StartupRule } from './types.js';

/** A start-up error about a missing address (`Organization URL is required`, `Elasticsearch URL cannot be empty`). */
export const WANTS_ADDRESS = /\b(?:URL|URI|endpoint)\b[^.\n]{0,60}\b(?:required|missing|empty|not (?:set|provided|given|configured|defined))\b/i;

export const address: StartupRule = {
  name: 'address',
  answers: 'a server that exited wanting an address in words: the addresses its code reads (…_URL) are declared, optional, with a placeholder URL',
  next: ({ last, code }) => {
    if (last?.outcome !== 'exited' || !WANTS_ADDRESS.test(last.message ?? '')) return undefined;
    const names = code.envRead.filter((n) => ADDRESS.test(n) && !last.env.some((v) => v.name === n) && !/^OTEL_|PROXY/.test(n)).slice(0, 3);
    if (names.length === 0) return undefined;
    const description = 'read by its code: the server would not start without an address';
    const declared = names.map((name) => ({ name, required: false, description, default: PLACEHOLDER_URL }));
    return { attempt: { args: last.args, env: [...last.env, ...declared] }, why: `it wants an address; its code reads ${names.join(', ')}`, declared };
  },
};
