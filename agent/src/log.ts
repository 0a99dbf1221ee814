/** One JSON line per event on stdout; `node` names the node in every line. */
export type Log = (event: string, fields?: Record<string, unknown>) => void;

export function jsonLog(nodeId: string, write: (line: string) => void = stdoutLine): Log {
  return (event, fields = {}) => {
    write(JSON.stringify({ time: new Date().toISOString(), node: nodeId, event, ...fields }));
  };
}

function stdoutLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** An error's message for a log line, without its stack. */
export function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
