// The JSON Schema subset operations are described with (types only): the core's, so that a kind can
// declare an operation of the service table (../core/kind.ts) without the core importing the service.

/** The subset of JSON Schema (2020-12) the operation table uses; plain data, so MCP and OpenAPI take it as is. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  maxItems?: number;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  default?: unknown;
}

/** The schema of an operation's input: an object with exactly its properties. */
export type ObjectSchema = JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };
