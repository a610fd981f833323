/**
 * A launcher that starts a program: a bin that only starts a program the package ships (a server written in Go,
 * @digitalocean/mcp) hands that program its stdio; in the guest's process that would be the guest's own, so it starts
 * as a child from the first.
 */
import type { StartupRule } from './types.js';

export const launcher: StartupRule = {
  name: 'launcher',
  answers: 'a bin that only starts a program the package ships: started as a child `node <bin>` from the first start',
  next: ({ last, planned, code }) =>
    last === undefined && code.launcher
      ? { attempt: { ...planned, inGuest: false }, why: 'its bin starts a program it ships (child_process), which needs stdio of its own' }
      : undefined,
};
