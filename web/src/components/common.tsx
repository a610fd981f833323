/** Small pieces every page uses: data loading, errors, health and rating badges, copy buttons, dates. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, forget } from '../api.js';

export interface Async<T> {
  data?: T;
  error?: Error;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change; stale answers (from earlier deps) are dropped. A load refused by the rate limit
 * (429) is tried again by itself once the wait it was given is over.
 */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let again: ReturnType<typeof setTimeout> | undefined;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => {
        if (!live) return;
        setState({ error, loading: false });
        if (error instanceof ApiError && error.retryAfter) again = setTimeout(() => setTick((n) => n + 1), error.retryAfter * 1000 + 250);
      },
    );
    return () => {
      live = false;
      clearTimeout(again);
    };
  }, [...deps, tick]);
  // A reload asks the service again (not the app's short-lived cache of GETs).
  const reload = useCallback(() => {
    forget();
    setTick((n) => n + 1);
  }, []);
  return { ...state, reload };
}

export function ErrorMessage({ error }: { error?: unknown }) {
  if (!error) return null;
  const e = error as Error;
  // The page-wide notice says what a refusal by the rate limit means; here, only that this part waits for it.
  if (e instanceof ApiError && e.retryAfter) {
    return (
      <p class="muted" role="status">
        Refused for now: the request limit was reached (see the notice at the top). Possible again in {e.retryAfter} seconds.
      </p>
    );
  }
  const details = e instanceof ApiError ? e.details : [];
  return (
    <div class="error" role="alert">
      <p>{e.message}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li>
              <code>{d.path}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status">
      {what}…
    </p>
  );
}

/** Renders the async value, or its loading/error state. */
export function Show<T>({ value, children }: { value: Async<T>; children: (data: T) => ComponentChildren }) {
  if (value.error) return <ErrorMessage error={value.error} />;
  if (value.data === undefined) return <Loading />;
  return <>{children(value.data)}</>;
}

/** "1 tool", "2 tools". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const HEALTH_LABEL: Record<string, string> = { HEALTHY: 'Healthy', BROKEN: 'Broken', UNKNOWN: 'Not checked yet' };
/** Each status has its own mark as well as its colour, so pills differ without colour vision. */
const MARK: Record<string, string> = { healthy: '✓', pass: '✓', succeeded: '✓', broken: '✗', fail: '✗', failed: '✗', unknown: '?', running: '…' };

/**
 * Whether a tool's own calls say it fails, whatever its last check said: over the last 7 days, at least 3 calls that
 * the tool decided (platform failures left out) and fewer than half of them succeeded. GET /api/tools/:id/stats.
 */
export function callsFailing(stats: {
  windows: { window: string; calls: number; succeeded: number; platformFailures: number; topErrors: { code: string }[] }[];
}) {
  const w = stats.windows.find((x) => x.window === '7d');
  if (!w) return undefined;
  const decided = w.calls - w.platformFailures;
  if (decided < 3 || w.succeeded * 2 >= decided) return undefined;
  return { failed: decided - w.succeeded, decided, code: w.topErrors[0]?.code };
}

/**
 * The tool's health as a person should read it: "Healthy" only while its calls do not say otherwise (a tool whose
 * calls mostly fail is "Failing in calls", with the count), else its last check's status.
 */
export function ToolHealthBadge({ status, failing }: { status: string; failing?: ReturnType<typeof callsFailing> }) {
  if (!failing || status === 'BROKEN') return <HealthBadge status={status} />;
  return (
    <span class="badge health-broken" data-testid="calls-failing">
      <span aria-hidden="true">✗ </span>
      Failing in calls: {failing.failed} of {failing.decided} failed in 7 days{failing.code ? ` (${failing.code})` : ''}
    </span>
  );
}

export function HealthBadge({ status }: { status: string }) {
  const s = status.toLowerCase();
  return (
    <span class={`badge health-${s}`}>
      <span aria-hidden="true">{MARK[s] ?? '•'} </span>
      {HEALTH_LABEL[status] ?? status}
    </span>
  );
}

/** A run's verdict (pass / fail) as a pill with its mark. */
export function VerdictBadge({ verdict, prefix = '' }: { verdict: string; prefix?: string }) {
  return (
    <span class={`badge verdict-${verdict}`}>
      <span aria-hidden="true">{MARK[verdict] ?? '•'} </span>
      {prefix}
      {verdict}
    </span>
  );
}

export function Rating({ average, count }: { average: number | null; count: number }) {
  if (!count || average === null) return <span class="muted">No ratings</span>;
  const full = Math.round(average);
  return (
    <span class="rating" aria-label={`Rated ${average.toFixed(1)} out of 5 by ${count} ${count === 1 ? 'person' : 'people'}`}>
      <span aria-hidden="true">{'★'.repeat(full) + '☆'.repeat(5 - full)}</span>{' '}
      <span class="muted">
        {average.toFixed(1)} ({count})
      </span>
    </span>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (no permission): select a hidden field's text instead.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <button type="button" class="secondary small" onClick={copy}>
      {copied ? 'Copied' : label}
      <span class="visually-hidden" aria-live="polite">
        {copied ? ' — copied to the clipboard' : ''}
      </span>
    </button>
  );
}

export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div class="code-block">
      <div class="code-head">
        <span>{label}</span>
        <CopyButton text={code} label={`Copy ${label}`} />
      </div>
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </div>
  );
}

/**
 * An identifier (a parameter name, an error code) that may wrap only where a person would break it: after `_`, `-` or
 * `.`, and between a lower-case letter and an upper-case one (camelCase), never inside a word.
 */
export function Breakable({ text }: { text: string }) {
  const parts = text.replace(/[_.-]|[a-z0-9](?=[A-Z])/g, '$&\u0000').split('\u0000');
  return <>{parts.map((p, i) => (i < parts.length - 1 ? [p, <wbr />] : p))}</>;
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function toolHref(slugOrPkg: string, name?: string) {
  return `/tools/${name ? `${slugOrPkg}/${name}` : slugOrPkg}`;
}
