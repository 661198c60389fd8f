/**
 * How floe's long-running commands take their stop: the first SIGINT/SIGTERM starts a clean stop, a
 * second one exits at once (130). `floe run`, `backfill`, `replay` and `redrive-failed` abort their
 * work through it (kafka-session.ts stopOnSignals); the servers (`floe serve`, `floe kafka-serve`)
 * wait for it and finish the answers under way. The handlers are removed once the stop is done, so
 * nothing of the command outlives it.
 */

/** The first stop signal, and the removal of the handlers (call it when the stop is done). */
export interface StopSignal {
  received: Promise<NodeJS.Signals>;
  release(): void;
}

/**
 * The one way floe's long-running commands take SIGINT/SIGTERM: the first calls `onFirst`, a second
 * prints `again(signal)` and exits at once (130). Returns the removal of the handlers.
 */
export function onStopSignals(
  onFirst: (signal: NodeJS.Signals) => void,
  again: (signal: NodeJS.Signals) => string,
): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`\n${again(signal)}\n`);
      process.exit(130);
    }
    stopping = true;
    onFirst(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/** Listens for SIGINT/SIGTERM; `command` names the process in the line a second signal prints. */
export function waitForStopSignal(command: string): StopSignal {
  let release: () => void = () => undefined;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    release = onStopSignals(resolve, (signal) => `${command}: ${signal} again: exiting now`);
  });
  return { received, release };
}
