/**
 * The error shape of a failed request — which may fail before any route runs (a malformed or non-JSON body is refused
 * by the body parser): the shape declared by the operation the router matches (B on the scenario, run and batch
 * operations), or, for a method the path does not take (HEAD of a GET, or a 405), the shape of the operations on that
 * path.
 * Authentication and per-key rate-limit errors keep shape A (the error middleware sees to that).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Operation } from '../operations/define.js';

type Layer = { path: string | RegExp; methods: string[] };

/**
 * The error shape of a request, from the operation the router matches. Asked only when a request fails, so a request
 * that succeeds pays no second route match.
 */
export function errorShapeOf(router: Router, ops: readonly Operation[]): (ctx: Context, status: number) => Operation['errorShape'] | undefined {
  const opOf = new Map(ops.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op]));
  const declared = (layers: Layer[]) => layers.flatMap((layer) => layer.methods.map((m) => opOf.get(`${m} ${layer.path}`))).find((o) => o !== undefined);
  return (ctx, status) => {
    const matched = router.match(ctx.path, ctx.method);
    const op = declared(matched.pathAndMethod) ?? declared(matched.path);
    // The registry's own `{ error }` shape holds for the statuses its operations declare (as the OpenAPI document
    // says); a refusal of another status (a NUL in a version path) stays A.
    if (op?.errorShape === 'registry') return op.errors.includes(status) ? 'registry' : 'A';
    return op?.errorShape;
  };
}
