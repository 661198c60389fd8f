/**
 * A bench section in a node process of its own (child-section.ts starts it): argv[2] names the section,
 * argv[3] holds its settings as JSON; the figures go to stdout as JSON, progress lines to stderr.
 */
import type { IngestSettings } from './ingest-throughput.js';
import type { KeyedDeletesSettings } from './keyed-deletes.js';
import type { ScanSettings } from './scan-compaction.js';

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const section = process.argv[2];
const settings: unknown = JSON.parse(process.argv[3] ?? '{}');

if (section === 'ingest') {
  const { runIngestThroughput } = await import('./ingest-throughput.js');
  process.stdout.write(JSON.stringify(await runIngestThroughput(settings as IngestSettings, progress)));
  // The handler harness's temporary warehouse, as run.ts removes it for the bench's own process.
  const { getHandlerHarness } = await import('./floe-handler.js');
  await (await getHandlerHarness()).cleanup();
} else if (section === 'scan') {
  const { runScanAndCompaction } = await import('./scan-compaction.js');
  process.stdout.write(JSON.stringify(await runScanAndCompaction(settings as ScanSettings, progress)));
} else if (section === 'keyed-deletes') {
  const { runKeyedDeletes } = await import('./keyed-deletes.js');
  process.stdout.write(JSON.stringify(await runKeyedDeletes(settings as KeyedDeletesSettings, progress)));
} else {
  throw new Error(`section-child: no section '${section}' (ingest, scan, keyed-deletes)`);
}
