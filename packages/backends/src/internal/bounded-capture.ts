/**
 * Keeps at most `maxBytes` of a byte stream: its first quarter (where a CLI prints what went wrong
 * first) and its last three quarters (where it prints the final error), with a marker between them
 * when something was dropped.
 */
export interface BoundedCapture {
  push(chunk: Buffer): void;
  /** Whether bytes were dropped. */
  readonly truncated: boolean;
  text(): string;
}

export function createBoundedCapture(maxBytes: number): BoundedCapture {
  const headLimit = Math.floor(maxBytes / 4);
  const tailLimit = maxBytes - headLimit;
  const head: Buffer[] = [];
  let headBytes = 0;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let dropped = 0;

  const trimTail = (): void => {
    while (tailBytes > tailLimit && tail.length > 0) {
      const first = tail[0]!;
      const excess = tailBytes - tailLimit;
      if (first.length <= excess) {
        tail.shift();
        tailBytes -= first.length;
        dropped += first.length;
      } else {
        tail[0] = first.subarray(excess);
        tailBytes -= excess;
        dropped += excess;
      }
    }
  };

  return {
    push(chunk) {
      let rest = chunk;
      if (headBytes < headLimit) {
        const taken = rest.subarray(0, headLimit - headBytes);
        head.push(taken);
        headBytes += taken.length;
        rest = rest.subarray(taken.length);
      }
      if (rest.length === 0) return;
      tail.push(rest);
      tailBytes += rest.length;
      trimTail();
    },
    get truncated() {
      return dropped > 0;
    },
    text() {
      const headText = Buffer.concat(head).toString("utf8");
      const tailText = Buffer.concat(tail).toString("utf8");
      return dropped > 0 ? `${headText}\n…[${dropped} bytes dropped]…\n${tailText}` : headText + tailText;
    },
  };
}
