/**
 * `floe serve`: a read-only Iceberg REST catalog over the catalog the flags select
 * (functions/core/live/rest-server.ts). With `--live`, each table is served with one extra snapshot
 * holding its Kafka tail (functions/core/live/live-catalog.ts), so any engine that speaks the REST
 * catalog reads the merged table. Runs until SIGINT/SIGTERM.
 */
import { helpFor } from '../help.js';
import type { Catalog } from '../../core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../core/catalog/embedded-catalog.js';
import { describeError } from '../../core/errors.js';
import { LIVE_CACHE_FOLDER } from '../../core/io/confined-delete.js';
import { joinLocation, normalizeLocation } from '../../core/io/location.js';
import { LiveCatalog } from '../../core/live/live-catalog.js';
import { startRestServer, type ServedCatalog } from '../../core/live/rest-server.js';
import type { TableIdentifier } from '../../core/spec/types.js';
import { openCatalog } from '../catalog-options.js';
import { parseDuration } from '../flag-values.js';
import { kafkaFromOptions, kafkaTimeoutOf, liveRouteFor, parseLiveArgs } from '../live-options.js';
import { UsageError } from '../options.js';
import { serveSecurityFrom } from '../serve-security.js';
import { dropLeftovers } from '../exit-guard.js';
import { waitForStopSignal } from '../stop-signal.js';

/** `<ns...>/<table>/metadata/vN.metadata.json` below the warehouse: the embedded catalog's layout. */
const EMBEDDED_TABLE = /^(.+)\/[^/]+\/metadata\/v\d+\.metadata\.json$/;

/** Every namespace (all levels) of an embedded warehouse, from its tables' folders. */
async function embeddedNamespaces(catalog: EmbeddedCatalog): Promise<string[][]> {
  const prefix = `${normalizeLocation(catalog.warehouse)}/`;
  const found = new Set<string>();
  for (const object of await catalog.io.list(catalog.warehouse)) {
    const relative = normalizeLocation(object.location).slice(prefix.length);
    if (relative.split('/').includes(LIVE_CACHE_FOLDER)) continue;
    const m = EMBEDDED_TABLE.exec(relative);
    if (!m) continue;
    const levels = m[1].split('/');
    for (let i = 1; i <= levels.length; i++) found.add(levels.slice(0, i).join('\u001f'));
  }
  return [...found].sort().map((text) => text.split('\u001f'));
}

/** The catalog as the REST server sees it: namespaces come from the embedded layout where floe knows it. */
export function servedCatalogOf(catalog: Catalog, live?: LiveCatalog): ServedCatalog {
  const allNamespaces = async (): Promise<string[][]> => {
    if (catalog instanceof EmbeddedCatalog) return embeddedNamespaces(catalog);
    throw new UsageError(`listing namespaces is not supported for the ${catalog.name} catalog by floe serve`);
  };
  const namespaceExists = async (ns: string[]): Promise<boolean> => {
    const probe = catalog as Catalog & { namespaceExists?: (ns: string[]) => Promise<boolean> };
    if (probe.namespaceExists) return probe.namespaceExists(ns);
    if (catalog instanceof EmbeddedCatalog) {
      return (await embeddedNamespaces(catalog)).some((n) => n.join('\u001f') === ns.join('\u001f'));
    }
    return (await catalog.listTables(ns)).length > 0;
  };
  return {
    listNamespaces: async (parent = []) => {
      const all = await allNamespaces();
      return all.filter((n) => n.length === parent.length + 1 && parent.every((level, i) => n[i] === level));
    },
    namespaceExists,
    listTables: (ns) => catalog.listTables(ns),
    tableExists: (id: TableIdentifier) => catalog.tableExists(id),
    loadTable: async (id) => {
      if (live) return live.loadTable(id);
      const table = await catalog.loadTable(id);
      return { metadataLocation: table.metadataLocation, metadata: table.metadata };
    },
  };
}

export async function runServe(args: string[]): Promise<number> {
  const values = parseLiveArgs(args, 'serve');
  if (values.help) {
    process.stdout.write(helpFor('serve')!);
    return 0;
  }
  const port = Number(values.port);
  if (values.port === undefined || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError('--port P is required (0..65535; 0 picks a free port)');
  }
  const host = values.host ?? '127.0.0.1';
  const ttl = values['cache-ttl'];
  const ttlMs = ttl === undefined ? undefined : parseDuration(ttl, '--cache-ttl');
  const timeoutMs = kafkaTimeoutOf(values);
  const security = await serveSecurityFrom(values, host);
  // An empty catalog over a mistyped --warehouse would look like a warehouse with no tables.
  await (await import('../warehouse-check.js')).checkWarehouseArgs('serve', args);
  const { catalog } = await openCatalog(values);
  let live: LiveCatalog | undefined;
  if (values.live) {
    const kafka = await kafkaFromOptions(values);
    const cacheDir = values['cache-dir'];
    live = new LiveCatalog({
      catalog,
      kafka,
      routeFor: (table) => liveRouteFor(values, table),
      cacheRoot: cacheDir
        ? (table) => joinLocation(cacheDir, ...table.identifier.namespace, table.identifier.name)
        : undefined,
      ttlMs,
      timeoutMs,
      onWarning: (message) => process.stderr.write(`warning: ${message}\n`),
    });
  } else if (values['bootstrap-servers'] !== undefined) {
    throw new UsageError('--bootstrap-servers goes with --live');
  }
  const server = await startRestServer(servedCatalogOf(catalog, live), {
    port,
    host,
    onError: (error) => process.stderr.write(`floe serve: ${describeError(error)}\n`),
    auth: security.auth,
    tls: security.tls,
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const url = `${security.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const warning = security.warning?.(url);
  if (warning) process.stderr.write(`${warning}\n`);
  process.stdout.write(
    `floe serve: read-only Iceberg REST catalog (${catalog.name}${live ? ', live' : ''}${security.auth ? ', authenticated' : ''}) at ${url}\n`,
  );
  const signal = waitForStopSignal('floe serve');
  try {
    process.stderr.write(
      `floe serve: ${await signal.received}: stopping after the requests under way (again: at once)\n`,
    );
    await server.stop();
    const reads = live?.readsUnderWay() ?? 0;
    if (reads > 0)
      dropLeftovers(
        `floe serve: stopped; ${reads} Kafka read(s) the broker has not answered (the Kafka client still retrying) are dropped`,
      );
  } finally {
    signal.release();
  }
  return 0;
}
