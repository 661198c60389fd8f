#!/usr/bin/env node
// `floe` entry point for a clone (`npx floe ...` after `npm ci`): runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
// `floe scan ... | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
