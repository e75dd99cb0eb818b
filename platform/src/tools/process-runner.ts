import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs a tool to completion, collecting stdout as bytes and the tail of stderr as text. */
export function runProcess(command: string, args: string[], options: { signal?: AbortSignal; maxStdoutBytes?: number } = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (options.maxStdoutBytes !== undefined && size > options.maxStdoutBytes) {
        child.kill('SIGKILL');
        reject(new Error(`${command} produced more than ${options.maxStdoutBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      // Keep only the tail: ffmpeg's last lines say why it failed.
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}
