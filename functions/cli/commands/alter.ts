import { parseIdentifier } from '../../core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../core/catalog/embedded-catalog.js';
import { currentSchema } from '../../core/spec/metadata.js';
import { formatPartitionSpec } from '../../core/spec/partition-spec.js';
import { evolvePartitionSpec } from '../../core/table/evolve-partition-spec.js';
import { type ParsedOptions, requireOption, UsageError } from '../main.js';

/** `floe alter --warehouse DIR --table NS.NAME --partition-by EXPR`: partition evolution. */
export async function runAlter(values: ParsedOptions): Promise<number> {
  const expression = values['partition-by'];
  if (expression === undefined)
    throw new UsageError('alter needs --partition-by EXPR (use "" for unpartitioned)');
  const catalog = new EmbeddedCatalog({ warehouse: requireOption(values, 'warehouse') });
  const id = parseIdentifier(requireOption(values, 'table'));
  const result = await evolvePartitionSpec(catalog, id, expression);
  const schema = currentSchema(result.table.metadata);
  process.stdout.write(
    `${requireOption(values, 'table')}: new data is partitioned by spec ${result.spec['spec-id']}: ` +
      `${formatPartitionSpec(result.spec, schema) || 'unpartitioned'} (files already written keep their spec)\n`,
  );
  return 0;
}
