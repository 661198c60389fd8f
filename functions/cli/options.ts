/**
 * The command line every `floe` command shares: its flags (parsed once, in main.ts) and the helpers the
 * commands read them with. Commands import this file, never main.ts.
 */
import { parseArgs } from 'node:util';
import { CATALOG_OPTIONS } from './catalog-options.js';
import { UsageError } from './usage-error.js';

export { UsageError };

export const OPTIONS = {
  warehouse: { type: 'string' },
  ...CATALOG_OPTIONS,
  table: { type: 'string' },
  schema: { type: 'string' },
  'partition-by': { type: 'string' },
  topics: { type: 'string' },
  mode: { type: 'string' },
  'sort-by': { type: 'string' },
  'schema-evolution': { type: 'string' },
  identifier: { type: 'string' },
  'delete-mode': { type: 'string' },
  'kafka-value': { type: 'boolean' },
  'format-version': { type: 'string' },
  where: { type: 'string' },
  routes: { type: 'string' },
  json: { type: 'boolean' },
  limit: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'older-than': { type: 'string' },
  'retain-last': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Parsed = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;

export type ParsedOptions = Parsed['values'];

/** Parses a command's arguments (after the command name). @throws UsageError for unknown or malformed flags */
export function parseOptions(args: string[]): { values: ParsedOptions; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** @throws UsageError when the flag is missing */
export function requireOption(values: ParsedOptions, name: 'table'): string {
  const v = values[name];
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}
