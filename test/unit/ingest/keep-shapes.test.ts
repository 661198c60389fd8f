import { describe, expect, it } from 'vitest';
import { keepShapesAlive } from '../../../functions/core/ingest/keep-shapes.js';

describe('keepShapesAlive', () => {
  it('takes its tiny batch through the fast path: every record gathered as columns, then encoded', () => {
    // A batch that fell to the general path would hold none of the gathered-column shapes it is
    // there to keep alive.
    const shapes = keepShapesAlive();
    expect(shapes.error).toBeUndefined();
    expect(shapes.records).toBe(3);
    expect(shapes.gatheredRows).toBe(3);
    expect(shapes.parquetBytes).toBeGreaterThan(0);
  });

  it('runs once per process', () => {
    expect(keepShapesAlive()).toBe(keepShapesAlive());
  });
});
