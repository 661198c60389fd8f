import { ValidationError } from '../core/errors.js';

/**
 * Bad command-line usage: `floe` prints the message and the usage text, and exits with 2. A
 * ValidationError (retrying the same command cannot help), so code that handles bad input handles it.
 */
export class UsageError extends ValidationError {}
