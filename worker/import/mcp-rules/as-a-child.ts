/**
 * Run as a child: a server that failed in the guest's own process (a load error, or a time-out: a server that reads
 * stdin other than through `data` events never hears `initialize` there, guest/mcp-pipe.cjs) starts once more as a
 * child `node <bin>`, with the same arguments and variables. Asked last: a rule that knows what the server missed
 * answers first.
 */
import type { StartupRule } from './types.js';

export const asAChild: StartupRule = {
  name: 'as-a-child',
  answers: "a server that exited or timed out in the guest's own process: started as a child `node <bin>`, the rest the same",
  next: ({ last }) =>
    last?.inGuest && (last.outcome === 'exited' || last.outcome === 'timeout')
      ? {
          attempt: { args: last.args, env: last.env, inGuest: false },
          why: `it ${last.outcome === 'exited' ? 'exited' : 'timed out'} in the guest's own process`,
        }
      : undefined,
};
