/** The start-up rules of an MCP server import, in the order they are asked (the first that answers decides). */
import { address } from './address.js';
import { asAChild } from './as-a-child.js';
import { keyInWords } from './key-in-words.js';
import { launcher } from './launcher.js';
import { namedVariables } from './named-variables.js';
import { stdioCommand } from './stdio-command.js';
import { stdioFlag } from './stdio-flag.js';
import type { StartupRule } from './types.js';

export const STARTUP_RULES: readonly StartupRule[] = [launcher, stdioCommand, stdioFlag, namedVariables, address, keyInWords, asAChild];

export { serverSubcommand } from './stdio-command.js';
export { undeclaredVariables } from './named-variables.js';
export type * from './types.js';
