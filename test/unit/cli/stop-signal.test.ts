/**
 * The one way floe's long-running commands take SIGINT/SIGTERM (functions/cli/stop-signal.ts): the
 * first starts the stop, a second exits at once with 130 and its line, and once released neither is
 * taken any more. Signals are emitted on `process` itself; `process.exit` and stderr are spied on.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

/** process.exit stands in: it ends the handler as the real one ends the process. */
class Exited extends Error {}
const exitStandIn = (() => {
  throw new Exited();
}) as never;

/** Emits a signal on the process, as the OS would; a handler's exit ends the emit. */
function emit(signal: NodeJS.Signals): void {
  try {
    process.emit(signal, signal);
  } catch (error) {
    if (!(error instanceof Exited)) throw error;
  }
}
import { stopOnSignals } from '../../../functions/cli/kafka-session.js';
import { waitForStopSignal } from '../../../functions/cli/stop-signal.js';

describe('stop signals', () => {
  afterEach(() => vi.restoreAllMocks());

  it('aborts a Kafka command at the first signal and exits with 130 at the second', () => {
    // Prepare
    const exit = vi.spyOn(process, 'exit').mockImplementation(exitStandIn);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const controller = new AbortController();
    const stops: string[] = [];
    const release = stopOnSignals(controller, (signal) => stops.push(signal));

    // Act
    emit('SIGTERM');
    const abortedAtFirst = controller.signal.aborted;
    const exitedAtFirst = exit.mock.calls.length;
    emit('SIGINT');
    release();

    // Assess
    expect(stops).toEqual(['SIGTERM']);
    expect(abortedAtFirst).toBe(true);
    expect(exitedAtFirst).toBe(0);
    expect(exit).toHaveBeenCalledWith(130);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain(
      'floe: SIGINT again: exiting now (the table skips whatever is redelivered)',
    );
  });

  it('resolves a server’s wait at the first signal, and takes no signal once released', async () => {
    // Prepare
    const exit = vi.spyOn(process, 'exit').mockImplementation(exitStandIn);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const before = process.listenerCount('SIGTERM');
    const stop = waitForStopSignal('floe serve');

    // Act
    emit('SIGINT');
    const first = await stop.received;
    emit('SIGTERM');
    const exitsBeforeRelease = exit.mock.calls.length;
    stop.release();

    // Assess
    expect(first).toBe('SIGINT');
    expect(exitsBeforeRelease).toBe(1);
    expect(exit).toHaveBeenCalledWith(130);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain(
      'floe serve: SIGTERM again: exiting now',
    );
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
