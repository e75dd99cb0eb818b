import { createServer } from 'node:net';

/** Whether a listening socket can be bound to host:port right now (exclusively: a cluster's shared listener counts as taken). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}
