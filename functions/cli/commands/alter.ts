import { parseIdentifier } from '../../core/catalog/catalog.js';
import { currentSchema } from '../../core/spec/metadata.js';
import { formatPartitionSpec } from '../../core/spec/partition-spec.js';
import { evolvePartitionSpec } from '../../core/table/actions/evolve-partition-spec.js';
import { openCatalog } from '../catalog-options.js';
import { type ParsedOptions, requireOption, UsageError } from '../options.js';

/** `floe alter <catalog> --table NS.NAME --partition-by EXPR`: partition evolution. */
export async function runAlter(values: ParsedOptions): Promise<number> {
  const expression = values['partition-by'];
  if (expression === undefined)
    throw new UsageError('alter needs --partition-by EXPR (use "" for unpartitioned)');
  const id = parseIdentifier(requireOption(values, 'table'));
  const { catalog, lock } = await openCatalog(values, { withLock: true });
  const result = await evolvePartitionSpec(catalog, id, expression, { lock });
  const schema = currentSchema(result.table.metadata);
  process.stdout.write(
    `${requireOption(values, 'table')}: new data is partitioned by spec ${result.spec['spec-id']}: ` +
      `${formatPartitionSpec(result.spec, schema) || 'unpartitioned'} (files already written keep their spec)\n`,
  );
  return 0;
}
