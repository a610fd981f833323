/**
 * Checks a response against the service's own OpenAPI document: the status must be one the operation declares, and a
 * JSON body must match that status's schema. The test helper's `request` runs every response it receives through
 * this, so a response that drifts from the document fails the test that saw it.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';
import { _, type CodeOptions, type ValidateFunction } from 'ajv';

type Json = any;

/** ajv's standalone code generator (a CommonJS module whose export is the function). */
const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as (
  ajv: Ajv2020,
  refs: Record<string, string>,
) => string;

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

/** The schema of a response's JSON body, as a reference into the document added to ajv as `openapi`. */
const responseRef = (template: string, method: string, status: string) =>
  `openapi#/${['paths', template, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema'].map(segment).join('/')}`;

/** ajv for one document: validateSchema off, since checking the document against JSON Schema's meta-schema compiled
 * that meta-schema in every process (adding the document: 140-206 ms with it, 68-74 without); openapi.test.ts checks
 * the document whole. */
function ajvOf(doc: Json, code?: CodeOptions): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, inlineRefs: false, validateSchema: false, ...(code ? { code } : {}) });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'openapi');
  return ajv;
}

/** ajv's `errorsText` (its default separator and form), for validators compiled elsewhere. */
const errorsText = (errors: ValidateFunction['errors']) => (errors ?? []).map((e) => `body${e.instancePath} ${e.message}`).join(', ');

/**
 * The run's contract, made once by tests/run.ts (`TOOLSHED_TEST_CONTRACT_DIR`, inside the compiled tree so that the
 * module finds ajv's runtime): the document the code serves at /api/openapi.json (api/operations/index.ts) and every
 * response schema of it compiled by ajv into one module (its standalone code). A test process then neither builds
 * the document from the operations' zod schemas nor compiles a validator (together ~6 % of the test processes' CPU
 * in a profile of a whole run, 2026-12-03).
 */
export function writeRunContract(doc: Json, dir: string): void {
  const ajv = ajvOf(doc, { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` });
  const refs: Record<string, string> = {};
  const names: Record<string, string> = {};
  for (const [template, methods] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(methods as Record<string, Json>)) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        if (!response.content?.['application/json']?.schema) continue;
        const name = `v${Object.keys(refs).length}`;
        refs[name] = responseRef(template, method, status);
        names[refs[name]] = name;
      }
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
  fs.writeFileSync(path.join(dir, 'names.json'), JSON.stringify(names));
  fs.writeFileSync(path.join(dir, 'validators.cjs'), standaloneCode(ajv, refs));
}

export interface WrittenContract {
  doc: Json;
  validators: Map<string, ValidateFunction>;
}

/** What writeRunContract wrote in `dir` (a folder below one holding node_modules: the module requires ajv's runtime). */
export function loadContract(dir: string): WrittenContract {
  const module = createRequire(import.meta.url)(path.join(dir, 'validators.cjs')) as Record<string, ValidateFunction>;
  const names = JSON.parse(fs.readFileSync(path.join(dir, 'names.json'), 'utf8')) as Record<string, string>;
  return {
    doc: JSON.parse(fs.readFileSync(path.join(dir, 'openapi.json'), 'utf8')),
    validators: new Map(Object.entries(names).map(([ref, name]) => [ref, module[name]!])),
  };
}

let runContract: WrittenContract | undefined;

/** The run's document and validators (tests/run.ts), or undefined outside `npm test`. */
export function readRunContract(): WrittenContract | undefined {
  const dir = process.env.TOOLSHED_TEST_CONTRACT_DIR;
  if (!dir) return undefined;
  runContract ??= loadContract(dir);
  return runContract;
}

/**
 * The check of `doc`: with `precompiled` (readRunContract's validators of the same document) it compiles nothing;
 * otherwise each response schema is compiled at its first use, once per document and process.
 */
export function createContractChecker(doc: Json, precompiled?: Map<string, ValidateFunction>) {
  let shared: { ajv: Ajv2020; compiled: Map<string, ValidateFunction> } | undefined;
  const validatorOf = (ref: string): ValidateFunction => {
    const ready = precompiled?.get(ref);
    if (ready) return ready;
    if (!shared) {
      const text = JSON.stringify(doc);
      shared = byDocument.get(text);
      if (!shared) byDocument.set(text, (shared = { ajv: ajvOf(JSON.parse(text)), compiled: new Map() }));
    }
    let validate = shared.compiled.get(ref);
    if (!validate) shared.compiled.set(ref, (validate = shared.ajv.compile({ $ref: ref })));
    return validate;
  };
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
    const validate = validatorOf(responseRef(found.template, method, String(status)));
    if (validate(body)) return undefined;
    return `${where}: body does not match the document: ${errorsText(validate.errors)}`;
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
