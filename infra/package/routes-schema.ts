/**
 * `npm run schema`: writes functions/core/routing/routes.schema.json from the route schema
 * (test/unit/routing/routes-json-schema.test.ts fails while the checked-in file is out of date).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROUTES_SCHEMA_FILE, routesJsonSchemaText } from '../../functions/core/routing/routes-json-schema.js';

const file = path.resolve(import.meta.dirname, '../../functions/core/routing', ROUTES_SCHEMA_FILE);
writeFileSync(file, routesJsonSchemaText());
// In the repository's own format, so `npm run lint` passes on the file as written.
const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
execFileSync(process.execPath, [biome, 'format', '--write', file], { stdio: 'ignore' });
console.log(`wrote ${path.relative(process.cwd(), file)}`);
