import { Writable } from 'node:stream';

/** A stream that keeps every chunk written to it as a line, for asserting on what a logger wrote. */
export function captureLines(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}

/**
 * The lines of a process's output that are not log lines as the service writes them: each line one JSON object
 * with a `level` and a `time`, no key twice (pino writes a field named like one of its own, `name`, again rather
 * than replace it, and a reader then keeps either). Answers them, each with why.
 */
export function logLineProblems(output: string): string[] {
  const problems: string[] = [];
  for (const line of output.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      problems.push(`not JSON: ${line}`);
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || !('level' in parsed) || !('time' in parsed)) problems.push(`not a log line: ${line}`);
    else if (repeatsAKey(line)) problems.push(`a key twice: ${line}`);
  }
  return problems;
}

/** Whether an object of this (valid) JSON text has a key twice, at any depth. */
function repeatsAKey(json: string): boolean {
  const keysOfOpenObjects: (Set<string> | undefined)[] = [];
  for (let at = 0; at < json.length; at++) {
    const char = json[at];
    if (char === '"') {
      let end = at + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      const keys = keysOfOpenObjects.at(-1);
      // A string followed by a colon is a key of the innermost open object.
      if (keys && /^\s*:/.test(json.slice(end + 1, end + 3))) {
        const key = json.slice(at, end + 1);
        if (keys.has(key)) return true;
        keys.add(key);
      }
      at = end;
    } else if (char === '{') keysOfOpenObjects.push(new Set());
    else if (char === '[') keysOfOpenObjects.push(undefined);
    else if (char === '}' || char === ']') keysOfOpenObjects.pop();
  }
  return false;
}
