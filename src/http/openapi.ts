// The OpenAPI 3.1 document of the HTTP API, built from the same operation schemas the routes validate with.

import type { JsonSchema } from '../core/json-schema.js';
import { ERROR_TABLE } from '../errors.js';
import { INSTANCE_PARAM, MAX_PAGE_SIZE, type OperationRoute, operationRoutes } from './routes.js';

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_TABLE) },
        message: { type: 'string' },
      },
      additionalProperties: true,
    },
  },
};

/** Each HTTP status the error table maps to, with the codes that map to it. */
function errorResponses(): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const [code, e] of Object.entries(ERROR_TABLE))
    byStatus.set(e.http, [...(byStatus.get(e.http) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      String(status),
      {
        description: codes.join(', '),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
}

const INSTANCE = {
  name: INSTANCE_PARAM,
  in: 'query',
  required: false,
  description: 'the instance, host/name (default: the server’s first or named instance)',
  schema: { type: 'string' },
};

/** The `Link` response header of a paged route (RFC 8288). */
const NEXT_LINK = {
  description: `When the page is full (as many records as the limit asked for, or the default): \`<url>; rel="next"\`, the URL of the next page (the same query with the cursor after this page's last record), relative to the request's. Absent on the last page. Page sizes are capped at ${MAX_PAGE_SIZE}.`,
  schema: { type: 'string' },
};

/**
 * The OpenAPI document: one path per served operation (GET with query parameters for reads, POST with a
 * JSON body for writes), the instance list and the event stream; errors from the one error table. `routes`:
 * those the server serves [default: the table as it is now].
 */
export function openApiDocument(
  version: string,
  routes: readonly OperationRoute[] = operationRoutes(),
): Record<string, unknown> {
  const errors = errorResponses();
  const paths: Record<string, unknown> = {};
  for (const r of routes) {
    const { op } = r;
    const required = new Set(op.input.required ?? []);
    const ok = {
      description: 'the result',
      content: { 'application/json': { schema: op.output } },
      // A paged route links its next page when this one is full.
      ...(op.page ? { headers: { Link: NEXT_LINK } } : {}),
    };
    // A paged route's page size is capped below what the operation takes elsewhere.
    const param = (name: string, schema: JsonSchema): JsonSchema =>
      op.page?.limit === name ? { ...schema, maximum: MAX_PAGE_SIZE } : schema;
    const common = { operationId: op.name, summary: op.description, tags: [op.group] };
    paths[r.path] = {
      [r.method.toLowerCase()]:
        r.method === 'GET'
          ? {
              ...common,
              parameters: [
                INSTANCE,
                ...Object.entries(op.input.properties).map(([name, schema]) => ({
                  name,
                  in: 'query',
                  required: required.has(name),
                  ...(schema.description ? { description: schema.description } : {}),
                  schema: param(name, schema),
                })),
              ],
              responses: { '200': ok, ...errors },
            }
          : {
              ...common,
              parameters: [INSTANCE],
              requestBody: { required: true, content: { 'application/json': { schema: op.input } } },
              responses: { '200': ok, ...errors },
            },
    };
  }
  paths['/api/v1/instances'] = {
    get: {
      operationId: 'instances',
      summary: 'The instances this server serves.',
      tags: ['instance'],
      responses: { '200': { description: 'the instances' }, ...errors },
    },
  };
  paths['/api/v1/events'] = {
    get: {
      operationId: 'event_stream',
      summary:
        'Server-Sent Events: every event after `after` (or the Last-Event-ID header), in order, each once; `id` is the position.',
      tags: ['events'],
      parameters: [
        INSTANCE,
        { name: 'after', in: 'query', schema: { type: 'integer', minimum: 0 } },
        { name: 'type', in: 'query', schema: { type: 'string' } },
        { name: 'stream', in: 'query', schema: { type: 'string' } },
        { name: 'work_item_id', in: 'query', schema: { type: 'string' } },
        { name: 'Last-Event-ID', in: 'header', schema: { type: 'string' } },
      ],
      responses: { '200': { description: 'text/event-stream' }, ...errors },
    },
  };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'agentstate HTTP API', version },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        session: { type: 'apiKey', in: 'cookie', name: 'agentstate_session' },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
