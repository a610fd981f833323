/**
 * How an MCP server import got its server to start (worker/import/mcp-startup.ts): the start-up rules that fired, each
 * with its reason, and the starts it took — from `startup` of GET /api/packages/:name (the package page) or of GET
 * /api/package-imports/:id (the publish page's finished import). Nothing for a package of JS tools (`startup` null).
 */
import { plural } from './common.js';

export interface Startup {
  starts: number;
  rules: { rule: string; why: string }[];
  refusal: string | null;
}

export function StartupRules({ startup, heading = 'h2' }: { startup: Startup | null | undefined; heading?: 'h2' | 'h3' }) {
  if (!startup) return null;
  const H = heading;
  return (
    <section aria-labelledby="startup-h" class="panel" data-testid="startup">
      <H id="startup-h">How it was started</H>
      <p>
        {startup.rules.length === 0
          ? `Its MCP server started as its package says, with no start-up rule needed (${plural(startup.starts, 'start')}).`
          : `Its MCP server did not start as its package says; ${plural(startup.rules.length, 'start-up rule')} found how, in ${plural(startup.starts, 'start')}:`}
      </p>
      {startup.rules.length > 0 && (
        <ol data-testid="startup-rules">
          {startup.rules.map((r) => (
            <li>
              <code>{r.rule}</code>: <Words text={r.why} />
            </li>
          ))}
        </ol>
      )}
      {startup.refusal && (
        <p class="muted">
          Refused: <code>{startup.refusal}</code>
        </p>
      )}
    </section>
  );
}

/** A rule's reason, its `quoted` words (a command, a flag) as code. */
function Words({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</>;
}
