/**
 * routes.schema.json, the JSON Schema of a routes file, as text: the route schema itself (TypeBox
 * schemas are JSON Schema), under the draft it is written in. `npm run schema` writes it beside this
 * file; a unit test fails when the checked-in copy is out of date; the package ships it
 * (`floe/routes.schema.json`). A routes file names it with `"$schema"` for editors to complete and check.
 */
import { RouteSettingsSchema, RoutesDocumentSchema, RoutesSchema } from './route-schema.js';

/** The file's name, beside this module (functions/core/routing/) and in the package. */
export const ROUTES_SCHEMA_FILE = 'routes.schema.json';

type JsonObject = { [key: string]: unknown };

/** A TypeBox schema as plain JSON Schema: `expected` is floe's wording for its messages, no keyword. */
function plain(schema: unknown): JsonObject {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === 'expected' ? undefined : value)));
}

/** The JSON Schema of FLOE_TABLES and routes files, as the text of routes.schema.json. */
export function routesJsonSchemaText(): string {
  // The route once, under `definitions`, referenced by both forms (a list, or a document naming the schema).
  const list = { ...plain(RoutesSchema), items: { $ref: '#/definitions/route' } };
  const document = plain(RoutesDocumentSchema);
  document.properties = { ...(document.properties as JsonObject), routes: list };
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'floe table routes',
    description:
      'Which Kafka topics feed which Iceberg tables, and how: FLOE_TABLES, floe --routes files, the construct. ' +
      'A JSON array of routes, or { "$schema": ..., "routes": [...] }.',
    definitions: { route: plain(RouteSettingsSchema) },
    anyOf: [list, document],
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
