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
function refusal(errors: ErrorObject[], value: unknown): ValidationError {
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
  const first = errors[0];
  // A union (`string or null`) reports each branch and then itself: the union says it best.
  const union = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath);
  const error = union ?? first;
  const field = fieldOf(error);
  // A field inside an object is named by its path (clip.width, cookies[0].name); an entry of a
  // top-level array is worded by mustBe() itself.
  const nested = error.instancePath.split('/').length > 2 && !/^\/[^/]+\/\d+$/.test(error.instancePath);
  const named = nested ? readablePath(error.instancePath) : field;
  return new ValidationError(`${named} ${mustBe(error, valueAt(value, error.instancePath))}`, field);
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
  items?: Schema;
  anyOf?: Schema[];
}

const list = (values: unknown[]) => values.map(String).join(', ');
const orList = (values: unknown[]) =>
  values.length > 1 ? `${values.slice(0, -1).map(String).join(', ')} or ${String(values[values.length - 1])}` : String(values[0]);

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
    case 'string':
      return schema.minLength ? 'a non-empty string' : 'a string';
    case 'array': {
      const of = schema.items?.enum ? ` of ${orList(schema.items.enum)}` : '';
      return `${schema.minItems ? 'a non-empty array' : 'an array'}${of}`;
    }
    case 'null':
      return 'null';
    case 'object':
      return 'an object';
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
