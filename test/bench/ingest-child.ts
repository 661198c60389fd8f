/** The ingest section's child process (ingest-lambda-heap.ts): settings as argv[2], figures as JSON on stdout. */
import { type IngestSettings, runIngestThroughput } from './ingest-throughput.js';

const settings = JSON.parse(process.argv[2] ?? '{}') as IngestSettings;
const figures = await runIngestThroughput(settings, (line) => process.stderr.write(`[bench] ${line}\n`));
process.stdout.write(JSON.stringify(figures));
// The handler harness's temporary warehouse, as run.ts removes it for the bench's own process.
const { getHandlerHarness } = await import('./floe-handler.js');
await (await getHandlerHarness()).cleanup();
