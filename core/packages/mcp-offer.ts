/**
 * What an imported MCP server offers besides its tools, as seen at import and recorded per package version
 * (package_versions.mcp_offer): its icons and its tools' (MCP 2025-11-25 `icons`), its resources, resource templates
 * and prompts. Collections serve them (api/mcp/offer.ts). Everything here is bounded and checked: an icon is kept only
 * when its URL is https, or a data: URL of a PNG, JPEG, SVG or WebP image of at most MAX_ICON_DATA_CHARS; anything
 * else a server sends is dropped, never an error of the import.
 */
import { isPlainObject } from '../text/plain-object.js';

export interface McpIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

export interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  icons?: McpIcon[];
  annotations?: Record<string, unknown>;
}

export interface McpResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: McpIcon[];
  annotations?: Record<string, unknown>;
}

export interface McpPromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

export interface McpPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: McpPromptArgument[];
  icons?: McpIcon[];
}

export interface McpOffer {
  /** The server's own icons (`serverInfo.icons`). */
  icons?: McpIcon[];
  /** Per tool (its export name, the server's tool name), its icons. */
  toolIcons?: Record<string, McpIcon[]>;
  resources?: McpResource[];
  resourceTemplates?: McpResourceTemplate[];
  prompts?: McpPrompt[];
}

/** What a collection runs on an imported server besides tools/call, through the same job path. */
export type McpServerOp = 'resources/read' | 'prompts/get';

export const MCP_OFFER_LIMITS = {
  /** Resources, templates and prompts kept of one server (each). */
  maxItems: 500,
  /** Icons kept of one thing. */
  maxIcons: 8,
  /** An https icon URL. */
  maxIconUrlChars: 2048,
  /** A data: icon URL (about 48 KiB of image). */
  maxIconDataChars: 64 * 1024,
  maxTextChars: 2000,
  maxPromptArguments: 50,
};

export const ICON_TYPES = ['image/png', 'image/jpeg', 'image/svg+xml', 'image/webp'] as const;

const text = (v: unknown, max = MCP_OFFER_LIMITS.maxTextChars): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : undefined);

/** One icon as kept, or undefined when it is not one we serve (another scheme, another type, too large). */
function iconOf(raw: unknown): McpIcon | undefined {
  if (!isPlainObject(raw) || typeof raw.src !== 'string') return undefined;
  const src = raw.src;
  const mimeType = typeof raw.mimeType === 'string' ? raw.mimeType.toLowerCase() : undefined;
  if (mimeType !== undefined && !(ICON_TYPES as readonly string[]).includes(mimeType)) return undefined;
  if (src.startsWith('data:')) {
    if (src.length > MCP_OFFER_LIMITS.maxIconDataChars) return undefined;
    const m = /^data:([a-z0-9.+/-]+)(;[a-z0-9=;-]*)?,/i.exec(src);
    if (!m || !(ICON_TYPES as readonly string[]).includes(m[1].toLowerCase())) return undefined;
    if (mimeType !== undefined && mimeType !== m[1].toLowerCase()) return undefined;
  } else {
    if (src.length > MCP_OFFER_LIMITS.maxIconUrlChars) return undefined;
    let url: URL;
    try {
      url = new URL(src);
    } catch {
      return undefined;
    }
    if (url.protocol !== 'https:' || url.username || url.password) return undefined;
  }
  const sizes = Array.isArray(raw.sizes) ? raw.sizes.filter((s): s is string => typeof s === 'string' && /^(\d{1,5}x\d{1,5}|any)$/.test(s)).slice(0, 8) : [];
  return {
    src,
    ...(mimeType ? { mimeType } : {}),
    ...(sizes.length > 0 ? { sizes } : {}),
    ...(raw.theme === 'light' || raw.theme === 'dark' ? { theme: raw.theme } : {}),
  };
}

/** The icons we serve of what a server sent (https or data: PNG/JPEG/SVG/WebP, bounded); undefined when none. */
export function cleanIcons(raw: unknown): McpIcon[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const kept = raw
    .map(iconOf)
    .filter((i): i is McpIcon => i !== undefined)
    .slice(0, MCP_OFFER_LIMITS.maxIcons);
  return kept.length > 0 ? kept : undefined;
}

/** The fields every listed thing may have: title, description, mimeType, icons, annotations (each checked). */
function common(raw: Record<string, unknown>) {
  const icons = cleanIcons(raw.icons);
  return {
    ...(text(raw.title, 200) ? { title: text(raw.title, 200) } : {}),
    ...(text(raw.description) ? { description: text(raw.description) } : {}),
    ...(text(raw.mimeType, 200) ? { mimeType: text(raw.mimeType, 200) } : {}),
    ...(icons ? { icons } : {}),
    ...(isPlainObject(raw.annotations) && JSON.stringify(raw.annotations).length <= 2000 ? { annotations: raw.annotations } : {}),
  };
}

export function cleanResources(raw: unknown[]): McpResource[] {
  return raw
    .filter(isPlainObject)
    .filter((r) => typeof r.uri === 'string' && r.uri.length > 0 && r.uri.length <= 2048)
    .slice(0, MCP_OFFER_LIMITS.maxItems)
    .map((r) => ({
      uri: r.uri as string,
      name: text(r.name, 200) ?? (r.uri as string),
      ...common(r),
      ...(typeof r.size === 'number' && Number.isFinite(r.size) && r.size >= 0 ? { size: r.size } : {}),
    }));
}

export function cleanResourceTemplates(raw: unknown[]): McpResourceTemplate[] {
  return raw
    .filter(isPlainObject)
    .filter((r) => typeof r.uriTemplate === 'string' && r.uriTemplate.length > 0 && r.uriTemplate.length <= 2048)
    .slice(0, MCP_OFFER_LIMITS.maxItems)
    .map((r) => ({ uriTemplate: r.uriTemplate as string, name: text(r.name, 200) ?? (r.uriTemplate as string), ...common(r) }));
}

export function cleanPrompts(raw: unknown[]): McpPrompt[] {
  return raw
    .filter(isPlainObject)
    .filter((p) => typeof p.name === 'string' && /^[\w.-]{1,128}$/.test(p.name))
    .slice(0, MCP_OFFER_LIMITS.maxItems)
    .map((p) => {
      const { mimeType: _m, annotations: _a, ...rest } = common(p);
      const args = Array.isArray(p.arguments)
        ? p.arguments
            .filter(isPlainObject)
            .filter((a) => typeof a.name === 'string' && a.name.length > 0 && a.name.length <= 128)
            .slice(0, MCP_OFFER_LIMITS.maxPromptArguments)
            .map((a) => ({
              name: a.name as string,
              ...(text(a.title, 200) ? { title: text(a.title, 200) } : {}),
              ...(text(a.description) ? { description: text(a.description) } : {}),
              ...(typeof a.required === 'boolean' ? { required: a.required } : {}),
            }))
        : undefined;
      return { name: p.name as string, ...rest, ...(args && args.length > 0 ? { arguments: args } : {}) };
    });
}

/** Whether the offer has anything a collection serves beyond tools. */
export function offersResources(o: McpOffer | null | undefined): boolean {
  return (o?.resources?.length ?? 0) > 0 || (o?.resourceTemplates?.length ?? 0) > 0;
}
export function offersPrompts(o: McpOffer | null | undefined): boolean {
  return (o?.prompts?.length ?? 0) > 0;
}
