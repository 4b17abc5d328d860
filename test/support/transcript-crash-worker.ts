/**
 * Transcript crash worker: opens a transcript on a filesystem store and appends entries and
 * moves its leaf, as fast as it can, until it is killed. It prints an intent line before each
 * write and an acknowledgement line only after the write resolved (a blocking write to fd 1,
 * so a printed acknowledgement was sent before the kill):
 *
 *   AT <id> <parentId|->    AA <id> <parentId|->     an append of entry <id> under <parentId>
 *   LT <id>                 LA <id>                  a leaf move (setLeaf) to <id>
 *
 * It prints `ready <leaf|-> <count>` once the transcript is open.
 *
 * Usage: transcript-crash-worker.ts <dir> <seed>
 */
import { createFsStore } from "@keel/store-fs";
import { openTranscript } from "@keel/transcript";
import { sayBlocking } from "./say-blocking.js";

const [dir, seedText] = process.argv.slice(2);
if (!dir || !seedText) throw new Error("usage: transcript-crash-worker.ts <dir> <seed>");
let seed = Number(seedText) >>> 0 || 1;
const random = () => {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
  return seed / 0x1_0000_0000;
};
const say = sayBlocking;
const fail = (what: string, error: unknown): never => {
  process.stderr.write(`FAIL ${what}: ${JSON.stringify(error)}\n`);
  process.exit(2);
};

const store = createFsStore({ dir, lockWaitMs: 60_000 });
const opened = await openTranscript({ store, sessionId: "crash" });
if (opened.isErr()) fail("open", opened.error);
const transcript = opened._unsafeUnwrap();
say(`ready ${transcript.leafId() ?? "-"} ${transcript.tree().size}`);
let counter = 0;
for (;;) {
  const entries = transcript.tree().entries();
  if (entries.length > 2 && random() < 0.3) {
    const target = entries[Math.floor(random() * entries.length)]!.id;
    say(`LT ${target}`);
    const moved = await transcript.setLeaf(target);
    if (moved.isErr()) fail("setLeaf", moved.error);
    say(`LA ${target}`);
    continue;
  }
  const id = `${process.pid}-${++counter}`;
  const parent = transcript.leafId();
  say(`AT ${id} ${parent ?? "-"}`);
  const text = "x".repeat(Math.floor(random() * 4000));
  const appended = await transcript.append({ id, type: "message", message: { role: "user", content: text, timestamp: Date.now() } });
  if (appended.isErr()) fail("append", appended.error);
  say(`AA ${id} ${parent ?? "-"}`);
}
