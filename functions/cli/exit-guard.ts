/**
 * The CLI's last resort against a hang after its command is done. Every command, the servers included
 * (they return only once stopped), closes what it opened before it returns; when the process is still
 * alive seconds later, something floe opened was left behind (a socket a client reconnected after its
 * disconnect, a timer) — a floe bug, but not one to make the user's script, CI job or service manager
 * wait forever on a command that has finished. So: name what is still open on stderr, as a bug report,
 * and exit with the command's code.
 *
 * It never cuts output short: output still on its way to its reader (a pipe read slowly) is not a hang,
 * and the check waits for it; the check's own timer keeps nothing alive (unref), so a process that
 * drains exits at once as before.
 */

/** How long after its command the process may stay alive before the guard speaks. */
export const STUCK_AFTER_MS = 5_000;

export interface ExitGuardOptions {
  /** @default STUCK_AFTER_MS */
  afterMs?: number;
  /** Output not yet handed to its reader. @default stdout's or stderr's buffered bytes */
  writing?: () => boolean;
  /** What keeps the process alive. @default process.getActiveResourcesInfo */
  resources?: () => string[];
  /** Writes the report, then calls back. @default to stderr */
  report?: (text: string, done: () => void) => void;
  /** @default process.exit */
  exit?: (code: number) => void;
}

/** What a command knowingly leaves running, said instead of the bug report ({@link dropLeftovers}). */
let leftovers: string | undefined;

/**
 * For a command that stops with work it cannot end still running (a Kafka client's retries towards a
 * broker that does not answer): the guard then exits as soon as the command returned (once its
 * output is out), with `line` on stderr instead of a bug report, if that work still holds the process.
 */
export function dropLeftovers(line: string): void {
  leftovers = line;
}

/** Arms the guard for a command that returned `code` (see the file comment). Never throws. */
export function exitWhenStuck(code: number, options: ExitGuardOptions = {}): void {
  const known = leftovers;
  const afterMs = known === undefined ? (options.afterMs ?? STUCK_AFTER_MS) : 0;
  const writing =
    options.writing ?? (() => process.stdout.writableLength > 0 || process.stderr.writableLength > 0);
  const resources = options.resources ?? (() => process.getActiveResourcesInfo());
  const report =
    options.report ?? ((text: string, done: () => void) => void process.stderr.write(text, () => done()));
  const exit = options.exit ?? ((c: number) => process.exit(c));
  const check = () => {
    if (writing()) return arm();
    const open = countOf(resources());
    report(
      known === undefined
        ? `floe: bug: the command finished ${afterMs / 1000} s ago but the process did not exit; still open: ${open || 'nothing named'}. Exiting with the command's code ${code}; please report this line.\n`
        : `${known}\n`,
      () => exit(code),
    );
  };
  const arm = () => void setTimeout(check, afterMs).unref();
  arm();
}

/** `TCPSocketWrap ×2, Timeout`: each kind of resource once, with how many. */
function countOf(kinds: string[]): string {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind)).join(', ');
}
