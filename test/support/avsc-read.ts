/** An Avro container file read by avsc (a decoder no one here wrote): header metadata and records. */
import avro from 'avsc';

export interface AvscContainer {
  metadata: Record<string, string>;
  /** Longs as BigInt (snapshot ids use all 63 bits). */
  records: Record<string, unknown>[];
}

const bigLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (n: number | string) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

/** Reads `path` with avsc's file decoder. */
export function readAvroWithAvsc(path: string): Promise<AvscContainer> {
  return new Promise((resolve, reject) => {
    const records: Record<string, unknown>[] = [];
    const metadata: Record<string, string> = {};
    avro
      .createFileDecoder(path, {
        parseHook: (schema: avro.Schema) => avro.Type.forSchema(schema, { registry: { long: bigLong } }),
      })
      .on('metadata', (_type: unknown, _codec: unknown, header: { meta: Record<string, Buffer> }) => {
        for (const [k, v] of Object.entries(header.meta)) metadata[k] = v.toString('utf8');
      })
      .on('data', (record: Record<string, unknown>) => records.push(record))
      .on('end', () => resolve({ metadata, records }))
      .on('error', reject);
  });
}
