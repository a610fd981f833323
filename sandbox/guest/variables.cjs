// @ts-check
// A variable named in an argument as `${NAME}` (core/packages/toolkit.ts ARG_VARIABLE, which the guest cannot import):
// an MCP server's `args` (mcp-pipe.cjs) and a toolkit's arguments (discover.cjs) get the caller's value there.
'use strict';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The text with each `${NAME}` replaced by `valueOf(NAME)`, '' when it has none.
 * @param {string} text
 * @param {(name: string) => string | undefined} valueOf
 */
const fillVariables = (text, valueOf) => text.replace(VARIABLE, (_, name) => valueOf(name) ?? '');

module.exports = { fillVariables };
