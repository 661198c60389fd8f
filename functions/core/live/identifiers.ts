/**
 * What `floe serve` accepts as a namespace level or table name before anything reaches a catalog.
 * Catalogs turn identifiers into paths (the embedded catalog: one folder per level), so a name that a
 * filesystem would refuse or resolve elsewhere must be refused here, with a 400 that names the rule,
 * never with the error a filesystem gives (which carries the server's absolute path).
 *
 * The limits are the tightest of the catalogs floe serves: 255 bytes per name (a file name's limit on
 * every common filesystem, Glue's and S3 Tables' limit too), no path separators, no `.`/`..`, no
 * control characters (U+001F separates namespace levels on the wire), and a whole identifier short
 * enough that the path under a warehouse stays below the usual 4,096-byte limit.
 */

/** Bytes (UTF-8) of one namespace level or table name. */
export const MAX_NAME_BYTES = 255;
/** Bytes (UTF-8) of every level and the table name together. */
export const MAX_IDENTIFIER_BYTES = 1024;
/** Namespace levels. */
export const MAX_NAMESPACE_LEVELS = 16;

// Control characters: C0, DEL and C1.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Shows a refused name without its control characters and cut to a readable length. */
function shown(name: string): string {
  const visible = [...name]
    .map((c) => (CONTROL.test(c) ? `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}` : c))
    .join('');
  return visible.length > 40 ? `${visible.slice(0, 40)}… (${utf8Bytes(name)} bytes)` : visible;
}

/** Why `name` cannot be a namespace level or table name, or undefined when it can. Never throws. */
export function nameProblem(name: string, what: 'namespace level' | 'table name'): string | undefined {
  if (name === '') return `a ${what} cannot be empty`;
  if (CONTROL.test(name)) return `${what} '${shown(name)}' contains a control character`;
  if (name === '.' || name === '..') return `${what} '${name}' is not a name`;
  if (/[/\\]/.test(name)) return `${what} '${shown(name)}' contains a path separator ('/' or '\\')`;
  if (utf8Bytes(name) > MAX_NAME_BYTES)
    return `${what} '${shown(name)}' is longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/**
 * Why `namespace` (its levels) and, if given, `table` cannot name something `floe serve` serves, or
 * undefined when they can. Never throws.
 */
export function identifierProblem(namespace: readonly string[], table?: string): string | undefined {
  if (namespace.length === 0) return 'a namespace needs at least one level';
  if (namespace.length > MAX_NAMESPACE_LEVELS)
    return `a namespace has at most ${MAX_NAMESPACE_LEVELS} levels, got ${namespace.length}`;
  for (const level of namespace) {
    const problem = nameProblem(level, 'namespace level');
    if (problem) return problem;
  }
  if (table !== undefined) {
    const problem = nameProblem(table, 'table name');
    if (problem) return problem;
  }
  const total = [...namespace, table ?? ''].reduce((sum, n) => sum + utf8Bytes(n), 0);
  if (total > MAX_IDENTIFIER_BYTES)
    return `an identifier is at most ${MAX_IDENTIFIER_BYTES} bytes in all, got ${total}`;
  return undefined;
}
