import { describe, expect, it } from 'vitest';
import { OffsetOrderBuffer, orderTasks } from '../../../functions/core/replay/read-in-offset-order.js';
import { offsetFieldId, withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import type { FileScanTask, ScanPlan } from '../../../functions/core/scan/scan-plan.js';
import { encodeValue } from '../../../functions/core/spec/conversions.js';
import type { Schema } from '../../../functions/core/spec/types.js';

const schema = withKafkaLineage({
  type: 'struct',
  'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
} as Schema);
const OFFSET_ID = offsetFieldId(schema)!;

function task(path: string, lower?: bigint): FileScanTask {
  return {
    file: {
      content: 0,
      file_path: path,
      file_format: 'PARQUET',
      partition: {},
      record_count: 1n,
      file_size_in_bytes: 1n,
      spec_id: 0,
      ...(lower === undefined ? {} : { lower_bounds: new Map([[OFFSET_ID, encodeValue('long', lower)]]) }),
    },
    dataSequenceNumber: 1n,
    specId: 0,
    deletes: [],
  } as FileScanTask;
}

const at = (topic: string, partition: number, offset: bigint) => ({ lineage: { topic, partition, offset } });

describe('orderTasks', () => {
  it('orders files by their _kafka.offset lower bound; files without the stat come first', () => {
    // Prepare
    const plan = { tasks: [task('c', 300n), task('a', 0n), task('none'), task('b', 120n)] } as ScanPlan;
    // Act
    const ordered = orderTasks(plan, OFFSET_ID);
    // Assess
    expect(OFFSET_ID).toBeGreaterThan(1);
    expect(ordered.map((o) => [o.task.file.file_path, o.lower])).toEqual([
      ['a', 0n],
      ['none', 0n],
      ['b', 120n],
      ['c', 300n],
    ]);
  });
});

describe('OffsetOrderBuffer', () => {
  it('releases only offsets below the next file’s lower bound, per source partition in order', () => {
    // Prepare: the first file held offsets 0..5 of partition 0 and 100..102 of partition 1
    const buffer = new OffsetOrderBuffer<ReturnType<typeof at>>();
    for (const o of [5n, 0n, 3n]) buffer.add(at('t', 0, o));
    for (const o of [102n, 100n]) buffer.add(at('t', 1, o));
    // Act: the next file starts at offset 4
    const first = buffer.release(4n);
    buffer.add(at('t', 0, 4n));
    const rest = buffer.release(undefined);
    // Assess
    expect(first.map((g) => [g.partition, g.rows.map((r) => r.lineage.offset)])).toEqual([[0, [0n, 3n]]]);
    expect(rest.map((g) => [g.partition, g.rows.map((r) => r.lineage.offset)])).toEqual([
      [0, [4n, 5n]],
      [1, [100n, 102n]],
    ]);
    expect(buffer.size).toBe(0);
  });

  it('never releases an offset after a larger one of the same partition (any file order)', () => {
    // Prepare: files with random offset ranges over two partitions, read in lower-bound order
    const files = Array.from({ length: 30 }, (_, i) => {
      const start = BigInt((i * 37) % 200);
      return Array.from({ length: 5 }, (_, j) => at('t', (i + j) % 2, start + BigInt(j * 3)));
    }).sort((a, b) => Number(a[0].lineage.offset - b[0].lineage.offset));
    const buffer = new OffsetOrderBuffer<ReturnType<typeof at>>();
    const released: bigint[][] = [[], []];
    // Act
    files.forEach((rows, i) => {
      for (const r of rows) buffer.add(r);
      const next = files[i + 1]?.[0].lineage.offset;
      for (const g of buffer.release(next))
        released[g.partition].push(...g.rows.map((r) => r.lineage.offset));
    });
    // Assess
    for (const offsets of released) expect(offsets).toEqual([...offsets].sort((a, b) => Number(a - b)));
    expect(released[0].length + released[1].length).toBe(150);
  });
});
