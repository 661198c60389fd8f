/**
 * How the servers (`floe serve`, `floe kafka-serve`) wait for their stop: the first SIGINT/SIGTERM
 * starts a clean stop (answers under way are finished), a second one exits at once. The handlers are
 * removed once the stop is done, so nothing of the command outlives it.
 */

/** The first stop signal, and the removal of the handlers (call it when the stop is done). */
export interface StopSignal {
  received: Promise<NodeJS.Signals>;
  release(): void;
}

/** Listens for SIGINT/SIGTERM; `command` names the process in the line a second signal prints. */
export function waitForStopSignal(command: string): StopSignal {
  let first: NodeJS.Signals | undefined;
  let resolve: (signal: NodeJS.Signals) => void = () => undefined;
  const received = new Promise<NodeJS.Signals>((r) => {
    resolve = r;
  });
  const handler = (signal: NodeJS.Signals) => {
    if (first !== undefined) {
      process.stderr.write(`\n${command}: ${signal} again: exiting now\n`);
      process.exit(130);
    }
    first = signal;
    resolve(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    received,
    release: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
