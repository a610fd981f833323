/**
 * Where the registry is and how to reach it. Explicit options (the factory) or the environment, which is read at
 * call time — never at import — so that an app may set `REGISTRY_*` after importing this package.
 */

/** The public Toolshed registry. Self-hosters point `REGISTRY_API_URL` (or `apiUrl`) at their own service. */
export const DEFAULT_API_URL = 'https://toolshed.dev';

export type FetchFunction = typeof globalThis.fetch;

export interface RegistryToolsOptions {
  /** Base address of the registry API (search). Default: the public registry, `https://toolshed.dev`. */
  apiUrl?: string;
  /** Base address that executes tools. Default: `apiUrl`. */
  executorUrl?: string;
  /** A `tsk_…` key, sent as `Authorization: Bearer …`. Optional: anonymous calls are rate-limited per IP. */
  apiKey?: string;
  /** The fetch to use (tests, proxies, custom agents). Default: the global fetch, looked up at call time. */
  fetch?: FetchFunction;
}

export interface RegistryConfig {
  apiUrl: string;
  executorUrl: string;
  apiKey?: string;
  fetch: FetchFunction;
}

/** Options win; anything left out gets its default. The environment is not consulted. */
export function resolveOptions(options: RegistryToolsOptions): RegistryConfig {
  const apiUrl = baseUrl(options.apiUrl || DEFAULT_API_URL, 'apiUrl');
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new Error('No fetch is available in this runtime; pass `fetch` to createRegistryTools');
  return {
    apiUrl,
    executorUrl: options.executorUrl ? baseUrl(options.executorUrl, 'executorUrl') : apiUrl,
    apiKey: options.apiKey || undefined,
    fetch: fetchFn,
  };
}

/** REGISTRY_API_URL, REGISTRY_EXECUTOR_URL and REGISTRY_API_KEY as they are now (empty counts as unset). */
export function configFromEnv(): RegistryConfig {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  const apiUrl = env.REGISTRY_API_URL || undefined;
  return resolveOptions({
    apiUrl,
    executorUrl: env.REGISTRY_EXECUTOR_URL || apiUrl,
    apiKey: env.REGISTRY_API_KEY || undefined,
  });
}

function baseUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not an absolute URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name} must be an http(s) URL`);
  return url.href.replace(/\/+$/, '');
}
