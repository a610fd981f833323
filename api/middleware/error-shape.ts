/**
 * Marks scenario operations (9–17, runs, batches) for shape B errors before anything can fail — a malformed or
 * non-JSON body is refused by the body parser, before any route runs. Authentication and per-key rate-limit errors
 * keep shape A (the error middleware sees to that).
 */
import type { Context, Next } from 'koa';

const SCENARIO_PATH = /^\/api\/(?:scenarios|scenario-runs|scenario-batches)(?:\/|$)|^\/api\/collections\/[^/]+\/scenarios(?:\/|$)/;

export function isScenarioPath(path: string): boolean {
  return SCENARIO_PATH.test(path);
}

export function scenarioErrorShape() {
  return async (ctx: Context, next: Next) => {
    if (isScenarioPath(ctx.path)) ctx.state.errorShape = 'B';
    return next();
  };
}
