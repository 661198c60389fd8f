import { createServer } from 'node:net';

/** Listens on 127.0.0.1:0 to let the kernel pick a free port, then releases it. */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not read a free port');
  return address.port;
}
