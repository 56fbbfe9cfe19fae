import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from 'typebox';

import { ValidationError } from '../domain-errors.js';

// Requests are checked against the schemas of server/contract/ with ajv, and a refusal
// reads as it always has: 400 `{error: "Bad request", message}` whose message names the field
// and says what it must be, worded from the schema that refused it.

/** Bodies: JSON types exactly as sent; absent fields get the schema's default. */
const bodies = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: false });
/** Queries arrive as text: numbers and booleans are read from it. */
const queries = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, verbose: true, strict: false });
addFormats.default(bodies);
addFormats.default(queries);

/** `T` after validation filled in the schema's defaults for the fields `K`. */
export type Filled<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };

const compiled = new WeakMap<TSchema, ValidateFunction>();
function compile(ajv: Ajv, schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** A JSON request body, validated against `schema`, with the schema's defaults filled in. */
export function validateBody<T extends TSchema>(schema: T, body: unknown): Static<T> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('The request body must be a JSON object');
  }
  const validate = compile(bodies, schema);
  if (!validate(body)) throw refusal(validate.errors ?? [], body);
  return body as Static<T>;
}

/**
 * A query string, validated against `schema`. An empty value counts as absent (`?limit=`),
 * except for a parameter of fixed values, none of which is empty; a parameter given twice is
 * refused (its value is then a list).
 */
export function validateQuery<T extends TSchema>(schema: T, query: Record<string, string | string[] | undefined>): Static<T> {
  const properties = (schema as { properties?: Record<string, { enum?: unknown[] }> }).properties ?? {};
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && (value !== '' || properties[name]?.enum)) input[name] = value;
  }
  const validate = compile(queries, schema);
  if (!validate(input)) throw refusal(validate.errors ?? [], input);
  return input as Static<T>;
}

/** The field an error is about: the first segment of its path, or the missing property. */
function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return String(error.params.missingProperty);
  return decodeURIComponent(error.instancePath.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The ValidationError for ajv's errors: unknown fields first, then missing ones, then values. */
function refusal(all: ErrorObject[], value: unknown): ValidationError {
  const errors = withinClosestBranches(all).filter((e) => !e.schemaPath.includes('/propertyNames/'));
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties' && e.instancePath === '');
  if (unknown.length) {
    const names = unknown.map((e) => String(e.params.additionalProperty));
    const allowed = Object.keys((unknown[0].parentSchema as { properties?: object })?.properties ?? {});
    return new ValidationError(`Unknown field(s): ${names.join(', ')}; allowed: ${allowed.join(', ')}`, names[0]);
  }
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing) {
    const inside = missing.instancePath ? `${readablePath(missing.instancePath)}.` : '';
    return new ValidationError(`${inside}${String(missing.params.missingProperty)} is required`, fieldOf(missing));
  }
  const error = errors[0];
  const field = fieldOf(error);
  // A field inside an object is named by its path (clip.width, cookies[0].name), as is an object
  // refused for its fields (cookies[0] has an unknown field); any other entry of a top-level array
  // is worded by mustBe() itself.
  const ofFields = error.keyword === 'additionalProperties' || error.keyword === 'propertyNames';
  const nested = error.instancePath.split('/').length > 2 && (ofFields || !/^\/[^/]+\/\d+$/.test(error.instancePath));
  const named = nested ? readablePath(error.instancePath) : field;
  return new ValidationError(`${named} ${mustBe(error, valueAt(value, error.instancePath))}`, field);
}

/**
 * ajv's errors with each union (`anyOf`) narrowed to the branch the value came closest to: a
 * branch whose type the value has beats one whose type it has not, then the fewest complaints
 * about the value itself (a missing or unknown field, a wrong type), then the fewest in all.
 * So `{every_minutes: 0}` is told about every_minutes' range rather than that cron is missing,
 * and a name too long for `string or null` that it is too long. When no branch comes closest,
 * the union's own error stays, and the message says what each branch takes.
 */
function withinClosestBranches(errors: ErrorObject[]): ErrorObject[] {
  let kept = errors;
  // Innermost unions first, so an outer union weighs its branches by their narrowed errors.
  const unions = errors.filter((e) => e.keyword === 'anyOf').sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of kept) {
      if (!e.schemaPath.startsWith(prefix)) continue;
      const branch = e.schemaPath.slice(prefix.length).split('/')[0];
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const scored = [...branches.values()].map((list) => ({ list, score: distance(list, union.instancePath) }));
    scored.sort((a, b) => a.score[0] - b.score[0] || a.score[1] - b.score[1] || a.score[2] - b.score[2]);
    const [best, next] = scored;
    const tied = !best || (next && best.score.every((n, i) => n === next.score[i]));
    // Tied: the union's own error speaks for all its branches.
    kept = tied
      ? kept.filter((e) => !e.schemaPath.startsWith(prefix))
      : kept.filter((e) => e !== union && (!e.schemaPath.startsWith(prefix) || best.list.includes(e)));
  }
  return kept;
}

/** How far a value is from one branch of a union at `at`: wrong type, complaints about its shape, complaints in all. */
function distance(errors: ErrorObject[], at: string): [number, number, number] {
  const own = errors.filter((e) => e.instancePath === at && e.keyword !== 'anyOf');
  const wrongType = own.some((e) => e.keyword === 'type' || e.keyword === 'const' || e.keyword === 'enum') ? 1 : 0;
  const shape = own.filter((e) => ['required', 'additionalProperties', 'type'].includes(e.keyword)).length;
  return [wrongType, shape, errors.length];
}

/** A JSON pointer as a reader writes it: /cookies/0/name → cookies[0].name. */
function readablePath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function valueAt(value: unknown, pointer: string): unknown {
  let at: unknown = value;
  for (const part of pointer.split('/').slice(1)) at = (at as Record<string, unknown> | undefined)?.[part];
  return at;
}

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  items?: Schema;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  propertyNames?: Schema;
  description?: string;
}

const list = (values: unknown[]) => values.map(String).join(', ');
const orList = (values: unknown[]) =>
  values.length > 1 ? `${values.slice(0, -1).map(String).join(', ')} or ${String(values[values.length - 1])}` : String(values[0]);

/** An object's fields as a reader writes them: `cron, timezone?`. */
const fieldList = (schema: Schema) =>
  Object.keys(schema.properties ?? {})
    .map((name) => (schema.required?.includes(name) ? name : `${name}?`))
    .join(', ');

/** What a value of `schema` must be, as the rest of a sentence starting with the field's name. */
function describe(schema: Schema): string {
  if (schema.anyOf) return schema.anyOf.map(describe).join(' or ');
  if (schema.enum) return `one of ${list(schema.enum)}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      if (schema.minimum !== undefined && schema.maximum !== undefined) return `a whole number from ${schema.minimum} to ${schema.maximum}`;
      return schema.minimum !== undefined ? `a whole number of at least ${schema.minimum}` : 'a whole number';
    case 'number':
      if (schema.minimum !== undefined && schema.maximum !== undefined) return `a number from ${schema.minimum} to ${schema.maximum}`;
      return schema.minimum !== undefined ? `a number of at least ${schema.minimum}` : 'a number';
    case 'string':
      if (schema.minLength && schema.minLength > 1) return `a string of at least ${schema.minLength} characters`;
      return schema.minLength ? 'a non-empty string' : 'a string';
    case 'array': {
      const of = schema.items?.enum ? ` of ${orList(schema.items.enum)}` : '';
      return `${schema.minItems ? 'a non-empty array' : 'an array'}${of}`;
    }
    case 'null':
      return 'null';
    case 'object':
      return schema.properties ? `an object {${fieldList(schema)}}` : 'an object';
    default:
      return 'a valid value';
  }
}

/** The end of the sentence for one refused value. */
function mustBe(error: ErrorObject, value: unknown): string {
  const schema = (error.parentSchema ?? {}) as Schema;
  const inArray = /\/\d+$/.test(error.instancePath);
  switch (error.keyword) {
    case 'maxLength':
      return `is longer than ${schema.maxLength} characters`;
    case 'maxItems':
      return `holds at most ${schema.maxItems} entries`;
    case 'maxProperties':
      return `holds at most ${schema.maxProperties} entries`;
    case 'uniqueItems':
      return `lists ${JSON.stringify((value as unknown[])[Number(error.params.j)])} twice`;
    case 'additionalProperties':
      if (!schema.properties) return `may not have the field ${String(error.params.additionalProperty)}`;
      return `has an unknown field ${String(error.params.additionalProperty)}; allowed: ${fieldList(schema).replace(/\?/g, '')}`;
    case 'propertyNames': {
      const rule = schema.propertyNames?.description;
      return `has an invalid name ${JSON.stringify(error.params.propertyName)}${rule ? `; a name must be ${rule}` : ''}`;
    }
    case 'pattern':
      return 'is not in the expected form';
    case 'format':
      return `must be a valid ${String(error.params.format)}`;
    case 'enum':
      if (inArray) return `contains ${JSON.stringify(value)}; allowed: ${list(schema.enum ?? [])}`;
      return `must be ${describe(schema)}`;
    default:
      if (inArray && schema.type !== 'array') return `contains ${JSON.stringify(value)}, which must be ${describe(schema)}`;
      return `must be ${describe(schema)}`;
  }
}
