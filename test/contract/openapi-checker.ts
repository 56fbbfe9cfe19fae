import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext its namespace carries it.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

type Json = Record<string, any>;

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** One answer as the contract sees it. */
export interface Observed {
  method: string;
  /** Path and query as requested, e.g. /v1/screenshot/job_1?include_source=1 */
  path: string;
  status: number;
  headers: Headers;
  /** The raw body; JSON bodies are parsed here. */
  body: Buffer;
}

/**
 * Checks real answers against an OpenAPI 3.1 document: the operation exists, the status is
 * documented, required headers are present and match their schemas, the media type is
 * documented and a JSON body validates against its schema. Remembers which operations and
 * statuses it saw, so a test can prove every endpoint was exercised.
 */
export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; pattern: RegExp }>;
  /** "METHOD /template status" for every answer checked. */
  readonly seen = new Set<string>();

  constructor(
    readonly doc: Json,
    /** The path prefix of the document's server, e.g. "/v1" or "/admin/api". */
    private readonly prefix: string,
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, 'doc');
    this.templates = Object.keys(doc.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Every "METHOD /template" the document declares. */
  operations(): string[] {
    return Object.entries(this.doc.paths as Json).flatMap(([template, item]) =>
      METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${template}`),
    );
  }

  /** Operations never seen by `check`. */
  unexercised(): string[] {
    const seenOps = new Set([...this.seen].map((s) => s.split(' ').slice(0, 2).join(' ')));
    return this.operations().filter((op) => !seenOps.has(op));
  }

  /** The problems with one answer; empty when it matches the contract. */
  check(observed: Observed): string[] {
    const where = `${observed.method} ${observed.path} → ${observed.status}`;
    const pathOnly = observed.path.split('?')[0];
    if (!pathOnly.startsWith(this.prefix)) return [`${where}: not under ${this.prefix}`];
    const relative = pathOnly.slice(this.prefix.length) || '/';
    const match = this.templates.find((t) => t.pattern.test(relative));
    if (!match) return [`${where}: no path in the document matches ${relative}`];
    const method = observed.method.toLowerCase();
    const operation = this.doc.paths[match.template][method];
    if (!operation) return [`${where}: ${method.toUpperCase()} is not documented for ${match.template}`];
    const status = String(observed.status);
    const responses = operation.responses as Json;
    const key = [status, `${status[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) return [`${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    this.seen.add(`${method.toUpperCase()} ${match.template} ${status}`);

    let pointer = `/paths/${escape(match.template)}/${method}/responses/${key}`;
    let response = responses[key] as Json;
    if (response.$ref) {
      pointer = (response.$ref as string).slice(1);
      response = this.resolve(pointer);
    }
    const problems: string[] = [];
    for (const [name, rawHeader] of Object.entries((response.headers ?? {}) as Json)) {
      let headerPointer = `${pointer}/headers/${escape(name)}`;
      let header = rawHeader as Json;
      if (header.$ref) {
        headerPointer = (header.$ref as string).slice(1);
        header = this.resolve(headerPointer);
      }
      const value = observed.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const validate = this.validator(`${headerPointer}/schema`);
      if (!validate(value)) problems.push(`${where}: header ${name}: ${value} ${this.ajv.errorsText(validate.errors)}`);
    }

    const content = response.content as Json | undefined;
    if (!content) {
      if (observed.body.length > 0) problems.push(`${where}: a body was sent but none is documented`);
      return problems;
    }
    const mediaType = (observed.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!content[mediaType]) {
      problems.push(`${where}: content type "${mediaType}" is not documented (documented: ${Object.keys(content).join(', ')})`);
      return problems;
    }
    if (mediaType === 'application/json') {
      let body: unknown;
      try {
        body = JSON.parse(observed.body.toString('utf8'));
      } catch {
        return [...problems, `${where}: the body is not JSON`];
      }
      const validate = this.validator(`${pointer}/content/${escape(mediaType)}/schema`);
      if (!validate(body)) {
        problems.push(`${where}: body ${this.ajv.errorsText(validate.errors, { separator: '; ' })}: ${JSON.stringify(body).slice(0, 400)}`);
      }
    }
    return problems;
  }

  /** Validates a value against a named component schema (for answers outside any operation, e.g. 405). */
  checkSchema(name: string, value: unknown): string[] {
    const validate = this.validator(`/components/schemas/${escape(name)}`);
    return validate(value) ? [] : [`${name}: ${this.ajv.errorsText(validate.errors)}`];
  }

  /** Problems of a request body against its operation's schema (written inline in the document). */
  checkRequestBody(method: string, path: string, value: unknown): string[] {
    const validate = this.validator(`/paths/${escape(path)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`);
    return validate(value) ? [] : [`${method} ${path} body: ${this.ajv.errorsText(validate.errors)}`];
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `doc#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  private resolve(pointer: string): Json {
    let node: any = this.doc;
    for (const raw of pointer.split('/').slice(1)) node = node?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`unresolvable $ref #${pointer}`);
    return node;
  }
}

/** Fetches and returns the answer in the form the checker reads. */
export async function observe(base: string, method: string, path: string, init: RequestInit = {}): Promise<Observed & { json: any }> {
  const res = await fetch(`${base}${path}`, { method, ...init, signal: AbortSignal.timeout(30_000) });
  const body = Buffer.from(await res.arrayBuffer());
  let json: any = null;
  if ((res.headers.get('content-type') ?? '').startsWith('application/json') && body.length) {
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = null;
    }
  }
  return { method, path, status: res.status, headers: res.headers, body, json };
}
