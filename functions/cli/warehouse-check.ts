/**
 * The embedded catalog's warehouse folder, checked before a command runs (core/catalog/warehouse-folder.ts):
 * commands that only read refuse a missing folder, naming it, rather than show an empty catalog;
 * commands that write say it will be created (the embedded catalog makes it with the first table's
 * files, so a command that then fails on a bad flag leaves no empty folder behind). Read from the raw arguments, so every command — those
 * that parse their own flags too — is checked the same way, before its modules load.
 */

/** Commands that write into a table they may create: a missing warehouse is made for them. */
const WRITING_COMMANDS = new Set(['ingest', 'run', 'backfill', 'redrive-failed', 'demo']);

/** Flags that choose another catalog than the embedded one. */
const OTHER_CATALOG_FLAGS = ['--uri', '--table-bucket-arn'];

function flagValue(args: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (arg === flag) return args[i + 1];
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}

/**
 * The embedded warehouse a command's arguments select: `--warehouse`, else FLOE_WAREHOUSE when no
 * other catalog is chosen; `floe demo`'s default `warehouse`. Undefined for another catalog.
 */
export function warehouseOf(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (command === 'demo') return flagValue(args, '--warehouse') ?? 'warehouse';
  // Another catalog, or flags that conflict: catalog-options.ts says which, with its usage error.
  if (OTHER_CATALOG_FLAGS.some((f) => flagValue(args, f) !== undefined)) return undefined;
  const flag = flagValue(args, '--warehouse');
  if (flag !== undefined) return flag;
  const catalog = flagValue(args, '--catalog') ?? env.FLOE_CATALOG;
  if (catalog !== undefined && catalog !== 'embedded') return undefined;
  return env.FLOE_WAREHOUSE || undefined;
}

/**
 * Checks the warehouse folder the arguments select; for a writing command, says when it is new.
 * @throws WarehouseNotFoundError when a command that reads names a folder that is not there
 * @throws ValidationError when the warehouse is a file
 */
export async function checkWarehouseArgs(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const warehouse = warehouseOf(command, args, env);
  if (warehouse === undefined || warehouse === '') return;
  const { checkWarehouseFolder, localWarehouseFolder } = await import('../core/catalog/warehouse-folder.js');
  const access = WRITING_COMMANDS.has(command) ? 'write' : 'read';
  if ((await checkWarehouseFolder(warehouse, access)) === 'missing')
    say(
      `floe: the warehouse folder ${localWarehouseFolder(warehouse)} does not exist yet: it is created with the first table`,
    );
}
