/**
 * A child process for the kill -9 loop (test/integration/exactly-once/kill-loop.test.ts): runs `floe
 * ingest` over batch files in order, or `floe maintain` steps forever, through the CLI's own entry
 * point, and reports each finished step on stdout. The parent kills it with SIGKILL at random moments.
 *
 *   node --import tsx kill-loop-child.ts ingest <warehouse> <table> <schema.json> <from> <batch.json>...
 *   node --import tsx kill-loop-child.ts maintain <warehouse> <table> <seed>
 *
 * `ingest` prints `done <i>` once batch i's `floe ingest` returned 0 — the point where a Lambda would
 * answer the ESM, which then moves on; a batch without its line is delivered again by the next child.
 */
import { main } from '../../functions/cli/main.js';
import { seededRandom } from './seeded-random.js';

const quiet = () => true;

async function run(args: string[]): Promise<number> {
  // The CLI's own reports would only fill the pipe; the parent reads the step lines alone.
  const out = process.stdout.write.bind(process.stdout);
  process.stdout.write = quiet as typeof process.stdout.write;
  try {
    return await main(args);
  } finally {
    process.stdout.write = out;
  }
}

async function ingest(
  warehouse: string,
  table: string,
  schema: string,
  from: number,
  batches: string[],
): Promise<void> {
  for (let i = from; i < batches.length; i++) {
    const args = ['ingest', '--warehouse', warehouse, '--table', table, '--schema', schema];
    const code = await run([...args, '--partition-by', 'day(event_ts)', batches[i]]);
    if (code !== 0) {
      process.stdout.write(`failed ${i} ${code}\n`);
      process.exit(1);
    }
    process.stdout.write(`done ${i}\n`);
  }
}

async function maintain(warehouse: string, table: string, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const steps = [
    ['compact'],
    ['expire-snapshots', '--older-than', '0', '--retain-last', '2'],
    ['rewrite-manifests'],
  ];
  for (;;) {
    const step = steps[Math.floor(random() * steps.length)];
    const code = await run(['maintain', ...step, '--warehouse', warehouse, '--table', table]);
    process.stdout.write(`maintained ${step[0]} ${code}\n`);
    // Before the first batch creates the table every step fails at once: do not spin.
    if (code !== 0) await new Promise((r) => setTimeout(r, 100));
  }
}

const [role, warehouse, table, ...rest] = process.argv.slice(2);
// main() loads each command's code on first use: loaded here, so a kill lands in floe's work and not in
// start-up (under load, tsx compiling the maintenance code took longer than the loop let a maintainer
// live, and a whole loop could finish no maintenance step).
await import('../../functions/cli/warehouse-check.js');
await import(
  role === 'maintain' ? '../../functions/cli/commands/maintain.js' : '../../functions/cli/commands/ingest.js'
);
process.stdout.write('ready\n');
if (role === 'ingest') await ingest(warehouse, table, rest[0], Number(rest[1]), rest.slice(2));
else if (role === 'maintain') await maintain(warehouse, table, Number(rest[0]));
else throw new Error(`unknown role '${role}'`);
