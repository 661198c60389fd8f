/** Bad command-line usage: `floe` prints the message and the usage text, and exits with 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
