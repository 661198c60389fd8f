import { describe, expect, it } from 'vitest';
import { FreshFlight, SingleFlight } from '../../../functions/core/live/single-flight.js';

/** A promise settled from the outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SingleFlight', () => {
  it('runs the work once for every concurrent caller of a key, and again once it has settled', async () => {
    // Prepare
    const flight = new SingleFlight<string, number>();
    let runs = 0;
    const gate = deferred<void>();
    const work = async () => {
      runs++;
      await gate.promise;
      return runs;
    };
    // Act
    const callers = Array.from({ length: 200 }, () => flight.run('t@1', work));
    const other = flight.run('t@2', work);
    gate.resolve();
    const results = await Promise.all(callers);
    await other;
    const later = await flight.run('t@1', work);
    // Assess
    expect(new Set(results)).toEqual(new Set([results[0]]));
    expect(runs).toBe(3);
    expect(later).toBe(3);
    expect(flight.size).toBe(0);
  });

  it('hands a failure to every caller of that run and keeps nothing of it', async () => {
    // Prepare
    const flight = new SingleFlight<string, number>();
    const gate = deferred<number>();
    // Act
    const a = flight.run('k', () => gate.promise);
    const b = flight.run('k', async () => 7);
    gate.reject(new Error('broker gone'));
    // Assess
    await expect(a).rejects.toThrow('broker gone');
    await expect(b).rejects.toThrow('broker gone');
    await expect(flight.run('k', async () => 7)).resolves.toBe(7);
  });

  it('turns a synchronous throw into a rejection', async () => {
    const flight = new SingleFlight<string, number>();
    await expect(
      flight.run('k', () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(flight.size).toBe(0);
  });
});

describe('FreshFlight', () => {
  it('gives a caller only a run that started after it arrived; all late callers share one next run', async () => {
    // Prepare
    const flight = new FreshFlight<string, number>();
    const gates = [deferred<void>(), deferred<void>(), deferred<void>()];
    let started = 0;
    const work = async () => {
      const run = started++;
      await gates[run]!.promise;
      return run;
    };
    // Act
    const first = flight.run('t', work);
    const late = Array.from({ length: 199 }, () => flight.run('t', work));
    // Assess: the late callers wait for a run not yet started
    expect(started).toBe(1);
    gates[0]!.resolve();
    expect(await first).toBe(0);
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(2);
    const arrivingDuringSecond = flight.run('t', work);
    gates[1]!.resolve();
    expect(new Set(await Promise.all(late))).toEqual(new Set([1]));
    gates[2]!.resolve();
    expect(await arrivingDuringSecond).toBe(2);
    expect(started).toBe(3);
    expect(flight.size).toBe(0);
  });

  it('starts the next run even when the running one fails, and hands each caller its own run’s outcome', async () => {
    // Prepare
    const flight = new FreshFlight<string, string>();
    const gate = deferred<string>();
    // Act
    const failing = flight.run('t', () => gate.promise);
    const next = flight.run('t', async () => 'fresh');
    gate.reject(new Error('timeout'));
    // Assess
    await expect(failing).rejects.toThrow('timeout');
    await expect(next).resolves.toBe('fresh');
  });

  it('runs keys independently', async () => {
    const flight = new FreshFlight<string, string>();
    const gate = deferred<string>();
    const a = flight.run('a', () => gate.promise);
    const b = await flight.run('b', async () => 'b');
    gate.resolve('a');
    expect([await a, b]).toEqual(['a', 'b']);
  });
});
