import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { heapGrowingPercent, tuneHeapGrowth } from '../../../functions/handlers/heap-growth.js';

describe('heap growth for a Lambda function', () => {
  it('grows 4x from 1024 MB, 3x from 512 MB, and leaves V8 alone below or outside Lambda', () => {
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024' })).toBe(300);
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '10240' })).toBe(300);
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' })).toBe(200);
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1023' })).toBe(200);
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256' })).toBeUndefined();
    expect(heapGrowingPercent({})).toBeUndefined();
    expect(heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: 'lots' })).toBeUndefined();
  });

  it('takes FLOE_HEAP_GROWING_PERCENT over the default, 0 meaning V8 decides', () => {
    expect(
      heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024', FLOE_HEAP_GROWING_PERCENT: '150' }),
    ).toBe(150);
    expect(
      heapGrowingPercent({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024', FLOE_HEAP_GROWING_PERCENT: '0' }),
    ).toBeUndefined();
    expect(heapGrowingPercent({ FLOE_HEAP_GROWING_PERCENT: '250' })).toBe(250);
  });

  it('refuses an override that is not a whole percentage, saying what it got', () => {
    for (const bad of ['4x', '-1', '2.5', '5000']) {
      expect(() => heapGrowingPercent({ FLOE_HEAP_GROWING_PERCENT: bad })).toThrow(
        new RegExp(`FLOE_HEAP_GROWING_PERCENT must be a whole number .*"${bad.replace('.', '\\.')}"`),
      );
      expect(() => heapGrowingPercent({ FLOE_HEAP_GROWING_PERCENT: bad })).toThrow(ValidationError);
    }
  });

  it('passes V8 the flag it names, and nothing when V8 decides', () => {
    const set: string[] = [];
    expect(tuneHeapGrowth({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024' }, (f) => set.push(f))).toBe(300);
    expect(tuneHeapGrowth({}, (f) => set.push(f))).toBeUndefined();
    expect(set).toEqual(['--heap-growing-percent=300']);
  });

  it('changes the growth V8 uses at its next mark-compact when set after start-up', () => {
    // A renamed flag, or a node that freezes V8's flags after start-up, fails here: V8's verbose GC
    // trace names the factor each new old-generation limit was computed with.
    const flags: string[] = [];
    tuneHeapGrowth({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024' }, (f) => flags.push(f));
    const script = [
      "const v8 = require('node:v8');",
      'v8.setFlagsFromString(process.argv[1]);',
      'const keep = [];',
      // large arrays go straight to the old generation: a few dozen of them bring a mark-compact
      'for (let i = 0; i < 400; i++) { keep[i % 40] = new Array(128 * 1024).fill(i); }',
    ].join('\n');
    const run = spawnSync(
      process.execPath,
      ['--trace-gc-verbose', '--max-old-space-size=922', '-e', script, '--', flags[0]],
      { encoding: 'utf8' },
    );
    const output = `${run.stdout}${run.stderr}`;
    expect(output).not.toMatch(/unrecognized flag/i);
    const limits = output.split('\n').filter((line) => line.includes('[HeapController] Limit:'));
    expect(limits.length).toBeGreaterThan(0);
    expect(limits.every((line) => line.trimEnd().endsWith('(4.0)'))).toBe(true);
  });
});
