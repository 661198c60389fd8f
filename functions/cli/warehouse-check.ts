/**
 * The embedded catalog's warehouse folder (core/catalog/warehouse-folder.ts). A command that only reads
 * and fails over a missing folder ("no such table") fails naming the folder instead; `floe serve`
 * refuses one at start rather than serve an empty catalog. Commands that write say first that it will
 * be created (the embedded catalog makes it with the first table's files, so a command that then fails
 * on a bad flag leaves no empty folder behind). Read from the raw arguments, so every command — those
 * that parse their own flags too — is treated the same way; bad flags are still usage errors first.
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

/** Whether `command` writes into tables it may create (a missing warehouse is created for it). */
export function writesTables(command: string): boolean {
  return WRITING_COMMANDS.has(command);
}

/**
 * What a failed command that reads should report: a WarehouseNotFoundError naming the folder (the
 * failure as its cause) when the warehouse the arguments select is not there, else the failure itself.
 * Never throws.
 */
export async function explainFailure(
  command: string,
  args: readonly string[],
  failure: unknown,
  env: NodeJS.ProcessEnv = process.env,
): Promise<unknown> {
  if (writesTables(command)) return failure;
  try {
    await checkWarehouseArgs(command, args, env);
  } catch (missing) {
    if (missing instanceof Error && missing.name === 'WarehouseNotFoundError') {
      missing.cause = failure;
      return missing;
    }
  }
  return failure;
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
