/**
 * Picks the error shape of a request before anything can fail — a malformed or non-JSON body is refused by the body
 * parser, before any route runs: the shape declared by the operation the router will match (B on the scenario, run
 * and batch operations), or, for a method the path does not take (HEAD of a GET, or a 405), the shape of the
 * operations on that path.
 * Authentication and per-key rate-limit errors keep shape A (the error middleware sees to that).
 */
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Operation } from '../operations/define.js';

type Layer = { path: string | RegExp; methods: string[] };

export function scenarioErrorShape(router: Router, ops: readonly Operation[]) {
  const shapeOf = new Map(ops.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op.errorShape]));
  const declared = (layers: Layer[]) => layers.flatMap((layer) => layer.methods.map((m) => shapeOf.get(`${m} ${layer.path}`))).find((s) => s !== undefined);
  return async (ctx: Context, next: Next) => {
    const matched = router.match(ctx.path, ctx.method);
    const shape = declared(matched.pathAndMethod) ?? declared(matched.path);
    if (shape === 'B') ctx.state.errorShape = 'B';
    return next();
  };
}
