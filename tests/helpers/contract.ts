/**
 * Checks a response against the service's own OpenAPI document: the status must be one the operation declares, and a
 * JSON body must match that status's schema. The test helper's `request` runs every response it receives through
 * this, so a response that drifts from the document fails the test that saw it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type Json = any;

interface Route {
  template: string;
  regex: RegExp;
  literal: number;
  methods: Record<string, Json>;
}

/**
 * One validator set per document in this process (a file's services serve the same document): the document is added
 * to ajv once and each response schema compiled by reference into it, so the shared component schemas compile once,
 * not once per response that uses them (ajv's compiling was the helper's main cost: ~0.9 s of a three-service file).
 */
const byDocument = new Map<string, { ajv: Ajv2020; compiled: Map<string, ValidateFunction> }>();

/** A JSON pointer segment in a URI fragment. */
const segment = (key: string) => encodeURIComponent(key.replaceAll('~', '~0').replaceAll('/', '~1'));

export function createContractChecker(doc: Json) {
  const text = JSON.stringify(doc);
  let shared = byDocument.get(text);
  if (!shared) {
    // validateSchema off: checking the document against JSON Schema's meta-schema compiled that meta-schema in every
    // process (adding the document: 140-206 ms with it, 68-74 without); openapi.test.ts checks the document whole.
    const ajv = new Ajv2020({ strict: false, allErrors: false, inlineRefs: false, validateSchema: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(JSON.parse(text), 'openapi');
    byDocument.set(text, (shared = { ajv, compiled: new Map() }));
  }
  const { ajv, compiled } = shared;
  const routes: Route[] = Object.entries(doc.paths as Record<string, Json>).map(([template, methods]) => {
    const restParams = new Set<string>();
    for (const op of Object.values(methods) as Json[]) for (const p of op.parameters ?? []) if (p['x-allow-slashes']) restParams.add(p.name);
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const m = /^\{(.+)\}$/.exec(part);
        if (!m) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
        return restParams.has(m[1]!) ? '(.+)' : '([^/]+)';
      })
      .join('');
    return { template, regex: new RegExp(`^${source}$`), literal: template.replace(/\{[^}]+\}/g, '').length, methods };
  });

  /**
   * The operations the router may pick, most literal first. Usually the first; an operation may pass a request on
   * (`claims`: `/api/tools/<package>/reviews` is the detail of a tool named `reviews`), so a response conforms when it
   * fits any of them.
   */
  function find(method: string, path: string): { template: string; op: Json }[] {
    const candidates = routes.filter((r) => r.regex.test(path) && r.methods[method.toLowerCase()]);
    candidates.sort((a, b) => b.literal - a.literal);
    return candidates.map((r) => ({ template: r.template, op: r.methods[method.toLowerCase()] }));
  }

  function checkOne(found: { template: string; op: Json }, method: string, path: string, status: number, contentType: string | null, body: unknown) {
    const where = `${method} ${path} (${found.op.operationId}) → ${status}`;
    const response = found.op.responses?.[String(status)];
    if (!response) return `${where}: status not declared (declared: ${Object.keys(found.op.responses ?? {}).join(', ')})`;
    const media = response.content?.['application/json'];
    if (!media?.schema || !contentType?.includes('json')) return undefined; // streams and pages: the status is what is checked
    const pointer = ['paths', found.template, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'];
    const ref = `openapi#/${pointer.map(segment).join('/')}`;
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
    if (validate(body)) return undefined;
    return `${where}: body does not match the document: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`;
  }

  /** Undefined when the response conforms (or no operation describes it); else what is wrong. */
  return function check(method: string, url: string, status: number, contentType: string | null, body: unknown): string | undefined {
    const path = new URL(url, 'http://x').pathname;
    const problems: string[] = [];
    for (const found of find(method, path)) {
      const problem = checkOne(found, method, path, status, contentType, body);
      if (problem === undefined) return undefined;
      problems.push(problem);
    }
    return problems[0];
  };
}
