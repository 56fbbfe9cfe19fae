import type { TObject, TSchema } from 'typebox';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/**
 * The schema as JSON: TypeBox's own markers (symbols, `~` keys) left out. Request bodies are
 * written inline with it, not as references: generated clients (openapi-typescript) keep a
 * field with a default optional in a request body, but make it required in a component.
 */
export const plain = (schema: unknown): JsonSchema => JSON.parse(JSON.stringify(schema, (key, value) => (key.startsWith('~') ? undefined : value)));

/**
 * `components.schemas` from named TypeBox schemas: each as JSON, and wherever one of them
 * appears inside another, a `$ref` to it instead of a copy.
 */
export function componentSchemas(named: Record<string, TSchema>): Record<string, JsonSchema> {
  const byText = new Map<string, string>();
  for (const [name, schema] of Object.entries(named)) {
    const text = JSON.stringify(plain(schema));
    if (!byText.has(text)) byText.set(text, name);
  }
  const refer = (node: unknown, top: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => refer(item, false));
    if (node === null || typeof node !== 'object') return node;
    const name = top ? undefined : byText.get(JSON.stringify(node));
    // Only object and array shapes become references; a bare string pattern stays inline.
    const object = node as JsonSchema;
    if (name && (object.type === 'object' || object.type === 'array')) return { $ref: `#/components/schemas/${name}` };
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, refer(value, false)]));
  };
  return Object.fromEntries(Object.entries(named).map(([name, schema]) => [name, refer(plain(schema), true) as JsonSchema]));
}

/** OpenAPI query parameters, one per property of a query schema. */
export function queryParameters(schema: TObject): JsonSchema[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = plain(property);
    return { name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

/** A `oneOf` over the status variants named `<prefix>Pending` …, discriminated by `status`. */
export function jobOneOf(prefix: string): JsonSchema {
  const names = ['pending', 'processing', 'completed', 'failed'];
  const ref = (s: string) => `#/components/schemas/${prefix}${s[0].toUpperCase()}${s.slice(1)}`;
  return {
    oneOf: names.map((s) => ({ $ref: ref(s) })),
    discriminator: { propertyName: 'status', mapping: Object.fromEntries(names.map((s) => [s, ref(s)])) },
  };
}
