/**
 * Decodes a route's records by its `format` (JSON when it has none), for both ingest paths (append
 * and CDC), so a table's mode never changes which payloads it can read.
 */
import type { RawRecord } from '../records/esm-event.js';
import { decodeRecords } from '../formats/decode-records.js';
import { createPayloadDecoder, type PayloadDecoder } from '../formats/payload-decoder.js';
import { type DecodedBatch, decodeJsonRecords, fromFormatDecoded } from '../mapping/decoded-record.js';
import type { TableRoute } from './routes.js';

// One decoder per route: its schema caches live as long as the route (the Lambda's lifetime).
const decoders = new WeakMap<TableRoute, PayloadDecoder>();

/**
 * Decodes the records' payloads by the route's format; records that cannot be decoded come back as
 * dead letters (stage `decode`).
 * @throws LakeError (retryable, e.g. a schema registry outage, or a configuration error) when the
 *   batch must fail as a whole; such errors are never turned into dead letters
 */
export async function decodeFor(route: TableRoute, records: RawRecord[]): Promise<DecodedBatch> {
  if (!route.format) return decodeJsonRecords(records);
  let decoder = decoders.get(route);
  if (!decoder) {
    decoder = createPayloadDecoder(route.format);
    decoders.set(route, decoder);
  }
  const out = await decodeRecords(decoder, records);
  return { decoded: out.decoded.map(fromFormatDecoded), deadLetters: out.deadLetters };
}
