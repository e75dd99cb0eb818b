import type { Logger } from '../logging/logger.ts';

export type Stoppable = { name: string; stop(): Promise<void> };

/**
 * Keeps what a process started, stops it in reverse order on SIGINT/SIGTERM, and exits. A second
 * signal while stopping exits at once.
 */
export class Lifecycle {
  private readonly parts: Stoppable[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  add(name: string, stop: () => Promise<void>): void {
    this.parts.push({ name, stop });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const part of [...this.parts].reverse()) {
        try {
          await part.stop();
          this.logger.info({ part: part.name }, 'stopped');
        } catch (error) {
          this.logger.error({ err: error, part: part.name }, 'failed to stop cleanly');
        }
      }
    })();
    return this.stopping;
  }

  exitOnSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.stopping) process.exit(130);
      this.logger.info({ signal }, 'shutting down');
      void this.stop().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
}
