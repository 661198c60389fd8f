#!/usr/bin/env node
// `floe` entry point for a clone (`npx floe ...` after `npm ci`): runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
