/**
 * Splits a byte stream into LF-terminated lines (a trailing CR is dropped), decoding each whole
 * line as UTF-8 — a multi-byte character split across chunks is never torn, since 0x0A never
 * occurs inside one. Pending bytes are kept as a list of chunks, so a line of many megabytes costs
 * one concatenation, not one per chunk. A line longer than `maxLineBytes` is reported through
 * `onOverflow` and the splitter stops.
 */
export interface LineSplitter {
  push(chunk: Buffer): void;
  /** Flushes a last line that had no newline. */
  end(): void;
}

export function createLineSplitter(
  maxLineBytes: number,
  onLine: (line: string) => void,
  onOverflow: (bytes: number) => void,
): LineSplitter {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let stopped = false;

  const emit = (parts: Buffer[]): void => {
    let line = parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    onLine(line);
  };

  const overflow = (bytes: number): void => {
    stopped = true;
    pending = [];
    pendingBytes = 0;
    onOverflow(bytes);
  };

  return {
    push(chunk) {
      let start = 0;
      while (!stopped) {
        const newline = chunk.indexOf(0x0a, start);
        if (newline === -1) {
          const rest = chunk.subarray(start);
          if (rest.length === 0) return;
          if (pendingBytes + rest.length > maxLineBytes) return overflow(pendingBytes + rest.length);
          pending.push(rest);
          pendingBytes += rest.length;
          return;
        }
        const piece = chunk.subarray(start, newline);
        if (pendingBytes + piece.length > maxLineBytes) return overflow(pendingBytes + piece.length);
        const parts = pending.length === 0 ? [piece] : [...pending, piece];
        pending = [];
        pendingBytes = 0;
        emit(parts);
        start = newline + 1;
      }
    },
    end() {
      if (stopped || pendingBytes === 0) return;
      const parts = pending;
      pending = [];
      pendingBytes = 0;
      emit(parts);
    },
  };
}
