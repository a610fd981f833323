/**
 * Picks the error shape of a request before anything can fail — a malformed or non-JSON body is refused by the body
 * parser, before any route runs: the shape declared by the operation the router will match (B on scenario operations
 * 9–17, runs and batches), or, for a route not yet declared as an operation, B on the scenario paths. Authentication
 * and per-key rate-limit errors keep shape A (the error middleware sees to that).
 */
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Operation } from '../operations/define.js';

const SCENARIO_PATH = /^\/api\/(?:scenarios|scenario-runs|scenario-batches)(?:\/|$)|^\/api\/collections\/[^/]+\/scenarios(?:\/|$)/;

export function isScenarioPath(path: string): boolean {
  return SCENARIO_PATH.test(path);
}

export function scenarioErrorShape(router: Router, ops: readonly Operation[]) {
  const shapeOf = new Map(ops.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op.errorShape]));
  return async (ctx: Context, next: Next) => {
    const matched = router.match(ctx.path, ctx.method).pathAndMethod;
    const declared = matched.map((layer) => layer.methods.map((m) => shapeOf.get(`${m} ${layer.path}`))).flat().find((s) => s !== undefined);
    if (declared ? declared === 'B' : isScenarioPath(ctx.path)) ctx.state.errorShape = 'B';
    return next();
  };
}
