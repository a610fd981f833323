// The parsed JSON body (api/middleware/body.ts) lives on ctx.request.body.
import 'koa';

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
