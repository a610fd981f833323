/**
 * A tool flagged for hidden instructions in its descriptions (issue 43 item 4; docs/security.md "Tool poisoning"):
 * the warning on its page, with each finding, and the short one on its card.
 */
export interface ToolRisk {
  kind: string;
  detail: string;
}

const KIND: Record<string, string> = {
  'hidden-unicode': 'hidden characters',
  'model-instruction': 'instructions aimed at the model',
  'sensitive-data': 'asks for sensitive data',
  'tool-shadowing': 'tells the model how to use another tool',
};
const kinds = (risks: ToolRisk[]) => [...new Set(risks.map((r) => KIND[r.kind] ?? r.kind))].join(', ');

export function RiskWarning({ risks }: { risks?: ToolRisk[] }) {
  if (!risks?.length) return null;
  return (
    <section role="alert" aria-labelledby="risk-h" class="notice risk" data-testid="tool-risks">
      <h2 id="risk-h">Warning: this tool's description may be poisoned</h2>
      <p>
        Its description or parameters hold text a model reads and you may not see ({kinds(risks)}). An MCP client is not told it is read-only, and it ranks
        lower in search. Read the description before you give it to an agent.
      </p>
      <ul>
        {risks.map((r) => (
          <li key={r.detail}>
            <code>{r.detail}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function RiskBadge({ risks }: { risks?: ToolRisk[] }) {
  if (!risks?.length) return null;
  return (
    <span class="badge risk" data-testid="risk-badge" title={risks.map((r) => r.detail).join('\n')}>
      ⚠ Possible poisoning: {kinds(risks)}
    </span>
  );
}
