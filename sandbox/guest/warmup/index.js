// Run once by the guest before it reports ready, so that the code paths and heap pages an execution needs are
// already compiled and faulted in (page faults and first-time syscalls are expensive under gVisor).
import helper from './helper.cjs';

export const warm = {
  description: 'warm-up tool',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1, pattern: '^.+$' }, n: { type: 'integer', minimum: 0 } },
    required: ['text'],
    additionalProperties: false,
  },
  execute: async ({ text, n = 1 }) => {
    console.log('');
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { text: helper(text).repeat(n), at: new Date().toISOString(), items: [1, 2, 3].map((x) => ({ x })) };
  },
};
